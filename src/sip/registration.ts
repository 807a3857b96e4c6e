// Keeps one credential registered: sip.js refreshes a live registration by itself but never retries
// a failed one, so failures (a reject, a time-out, a refresh that lapsed) are retried here with
// exponential backoff, honouring Retry-After. Every change is reported for the API and the log.
import type { Registerer } from "sip.js";
import { RegistererState } from "sip.js";
import type { RegistrationState } from "../db/schema";
import { backoffMs } from "../lib/backoff";

export type RegistrationReport = { state: RegistrationState; status: number | null; error: string | null };
export type RetryPolicy = { baseMs: number; maxMs: number };

const disposeTimeoutMs = 3000;

export class Registration {
  private running = false;
  private failures = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly registerer: Registerer,
    private readonly report: (report: RegistrationReport) => void,
    private readonly retry: RetryPolicy,
  ) {
    registerer.stateChange.addListener((state) => {
      // a refresh that failed: sip.js just drops to Unregistered (a rejected attempt reports itself first)
      if (state === RegistererState.Unregistered)
        setTimeout(() => this.running && !this.retryTimer && this.fail(null, "registration lapsed"), 0);
    });
  }

  start() {
    this.running = true;
    this.attempt();
  }

  /** Unregisters (waiting a little for the registrar's answer). */
  async stop() {
    this.running = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await Promise.race([this.registerer.dispose(), Bun.sleep(disposeTimeoutMs)]);
    this.report({ state: "unregistered", status: null, error: null });
  }

  private attempt() {
    this.retryTimer = null;
    if (!this.running) return;
    this.registerer
      .register({
        requestDelegate: {
          onAccept: (response) => {
            this.failures = 0;
            this.report({ state: "registered", status: response.message.statusCode ?? 200, error: null });
          },
          onReject: (response) => {
            const { statusCode = null, reasonPhrase } = response.message;
            this.fail(statusCode, `${statusCode} ${reasonPhrase}`, this.registerer.retryAfter);
          },
        },
      })
      .catch((error: Error) => this.fail(null, error.message));
  }

  private fail(status: number | null, error: string, retryAfterSeconds?: number) {
    if (!this.running) return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const backoff = backoffMs(this.failures, this.retry.baseMs, this.retry.maxMs);
    const delay = retryAfterSeconds ? retryAfterSeconds * 1000 : backoff * (0.8 + Math.random() * 0.4);
    this.failures++;
    this.retryTimer = setTimeout(() => this.attempt(), delay);
    this.report({ state: "failing", status, error });
  }
}
