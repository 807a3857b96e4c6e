// The end of a call is written until it lands: kept in the spool first, then written (call_started if
// still missing, then the conclusion) with a growing delay between attempts while the database cannot
// be reached. A stop (shutdown) leaves what has not landed in the spool for the next start to replay.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { describeError } from "../errors";
import { createLimiter } from "../lib/limiter";
import { log } from "../log";
import { concludeCallTask, markCallStarted, type Conclusion } from "./call-lifecycle";
import { buildConcludedBody } from "./concluded-body";
import type { ConclusionSpool, PendingEnd } from "./conclusion-spool";

export type ConclusionWriterOptions = { retryBaseMs?: number; retryMaxMs?: number; attemptTimeoutMs?: number };

export class ConclusionWriter {
  private readonly stopping = new AbortController();
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly attemptTimeoutMs: number;
  // a body with its recording is tens of MB in memory until written: a few at a time, not every call
  // that ended at the same moment
  private readonly bigOnes = createLimiter(4);

  constructor(
    private readonly db: Db,
    readonly spool: ConclusionSpool,
    options: ConclusionWriterOptions = {},
  ) {
    this.retryBaseMs = options.retryBaseMs ?? 250;
    this.retryMaxMs = options.retryMaxMs ?? 5_000;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 5_000;
  }

  /**
   * Resolves true once the end is in the database (or the task was already closed by someone else),
   * false when the writer was stopped first: then the end stays in the spool. Never throws.
   */
  async conclude(pending: PendingEnd): Promise<boolean> {
    const callId = pending.task.callId;
    const kept = await this.spool.keep(pending).then(
      () => true,
      (error) => {
        log.error("call end not spooled", { callId, error: describeError(error) });
        return false;
      },
    );
    return pending.recording ? this.bigOnes(() => this.untilLanded(pending, kept)) : this.untilLanded(pending, kept);
  }

  private async untilLanded(pending: PendingEnd, kept: boolean): Promise<boolean> {
    const callId = pending.task.callId;
    const recorded = await this.withRecording(pending);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.attempt(pending, recorded);
        if (attempt > 1) log.info("call", { callId, event: "conclusion_landed", attempts: attempt });
        if (kept)
          await this.spool
            .drop(callId)
            .catch((error) => log.warn("spool file not removed", { callId, error: describeError(error) }));
        if (pending.recording) await rm(pending.recording.path, { force: true }).catch(() => {});
        return true;
      } catch (error) {
        if (attempt === 1 || attempt % 10 === 0)
          log.warn("call", { callId, event: "conclusion_retry", attempt, error: describeError(error) });
      }
      if (!(await this.pause(Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (attempt - 1))))) {
        log.warn("call", { callId, event: "conclusion_spooled", spooled: kept });
        return false;
      }
    }
  }

  /** The ends a previous run of this instance kept: each written (retried until it lands or stop). */
  async replay(): Promise<number> {
    const kept = await this.spool.list();
    let landed = 0;
    for (const { callId, read } of kept) {
      const pending = await read().catch((error) => {
        log.error("spool file unreadable", { callId, error: describeError(error) });
        return null;
      });
      if (pending && (await this.conclude(pending))) landed++;
    }
    if (kept.length > 0)
      log.info("call ends replayed from the spool", { kept: kept.length, landed, dir: this.spool.dir });
    return landed;
  }

  /** Stops retrying: ends still waiting stay in the spool. */
  stop() {
    this.stopping.abort();
  }

  /**
   * One write, given up after the time-out or at stop: a connection to a database that went away can
   * hang instead of failing. The write may still commit later; writing the end again is harmless.
   */
  private attempt(pending: PendingEnd, recorded: Conclusion["recorded"]): Promise<void> {
    const write = this.writeOnce(pending, recorded);
    write.catch(() => {}); // its failure is reported through the race below, or no longer matters
    const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.attemptTimeoutMs)]);
    return new Promise((resolve, reject) => {
      const onAbort = () =>
        reject(new Error(this.stopping.signal.aborted ? "stopped" : `no answer within ${this.attemptTimeoutMs} ms`));
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      write.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  private async writeOnce({ task, startedAt, conclusion }: PendingEnd, recorded: Conclusion["recorded"]) {
    if (startedAt !== null) await markCallStarted(this.db, task, startedAt);
    await concludeCallTask(this.db, task, { ...conclusion, recorded });
  }

  /** The event's body with the recording, built once for all attempts (off the event loop). */
  private async withRecording({ task, conclusion, recording }: PendingEnd): Promise<Conclusion["recorded"]> {
    if (!recording) return undefined;
    try {
      const { body, audio } = await buildConcludedBody(conclusion.event, recording.path);
      return { body, recording: { bytes: audio, contentType: recording.contentType } };
    } catch (error) {
      // the conclusion matters more than its recording: it goes out without one
      log.error("call recording lost", { callId: task.callId, error: describeError(error) });
      return undefined;
    }
  }

  /** Waits `ms`; false when stopped meanwhile. */
  private pause(ms: number): Promise<boolean> {
    const signal = this.stopping.signal;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

const instanceDir = (config: Config, kind: string) =>
  join(config.bridge.dataDir, kind, config.bridge.instanceId.replace(/[^\w.-]/g, "_"));

/** Where an instance keeps its unwritten call ends: its own folder, so instances never share one. */
export const spoolDirOf = (config: Config) => instanceDir(config, "spool");

/** Where an instance writes the recordings of its calls while they run and until they are concluded. */
export const recordingDirOf = (config: Config) => instanceDir(config, "recordings");
