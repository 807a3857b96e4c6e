// Whether this process can reach Postgres right now, judged by its own statements: a connection error,
// or a statement past its deadline while no other statement was answered either, marks the database
// away (a statement waiting on a lock while others come back is slow, not gone); a probe every
// `probeEveryMs` marks it back.
// While it is away, statements fail at once (no caller waits on a dead connection); one line is
// logged when an outage starts and one when it ends.
import { log } from "../log";

export type AvailabilityOptions = {
  /** how often the probe runs while the database is away */
  probeEveryMs: number;
  /** a probe that has no answer by then has failed (and its connections are dropped) */
  probeTimeoutMs: number;
};

export class DatabaseAvailability {
  private downSince: number | null = null;
  private lastReason = "";
  /** performance.now() of the first statement that succeeded after the last outage (null: none yet) */
  private upSince: number | null = null;
  private probeTimer: ReturnType<typeof setInterval> | null = null;
  private probing = false;
  private closed = false;
  /** performance.now() of the last statement that answered */
  private lastAnswerAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly name: string,
    private readonly options: AvailabilityOptions,
    /** one `select 1` with the probe's deadline, on the real client (not failed fast) */
    private readonly probe: () => Promise<unknown>,
  ) {}

  get isDown() {
    return this.downSince !== null;
  }

  /**
   * How long this process has seen the database without a break (0 while it is away or before the
   * first statement answered): a bridge judges others' expired heartbeats and leases only once it has
   * watched them for their whole TTL itself.
   */
  continuousMs() {
    return this.upSince === null || this.downSince !== null ? 0 : performance.now() - this.upSince;
  }

  /** A statement answered. */
  succeeded() {
    this.lastAnswerAt = performance.now();
    if (this.downSince === null && this.upSince === null) this.upSince = this.lastAnswerAt;
  }

  /** Whether any statement answered after `since` (performance.now()): the database is there, if slow. */
  answeredSince(since: number) {
    return this.lastAnswerAt > since;
  }

  /** A statement failed because the database is away (refused, reset, silent past the deadline). */
  failed(reason: string) {
    this.lastReason = reason;
    if (this.downSince !== null || this.closed) return;
    this.downSince = performance.now();
    this.upSince = null;
    log.warn("database unavailable", { db: this.name, reason });
    this.probeTimer = setInterval(() => void this.runProbe(), this.options.probeEveryMs);
    this.probeTimer.unref?.();
  }

  private async runProbe() {
    if (this.probing || this.downSince === null) return;
    this.probing = true;
    try {
      await this.probe();
      this.succeeded();
      this.back();
    } catch (error) {
      this.lastReason = (error as Error).message ?? String(error);
    } finally {
      this.probing = false;
    }
  }

  private back() {
    if (this.downSince === null) return;
    const downMs = Math.round(performance.now() - this.downSince);
    this.downSince = null;
    this.upSince = performance.now();
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
    log.info("database back", { db: this.name, downMs, lastError: this.lastReason });
  }

  close() {
    this.closed = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
  }
}
