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
import type { ConclusionSpool, PendingEnd } from "./conclusion-spool";
import { writeRecordedCallEnd } from "./conclusion-thread";
import { writeCallEnd } from "./write-call-end";

export type ConclusionWriterOptions = { retryBaseMs?: number; retryMaxMs?: number; attemptTimeoutMs?: number };

export class ConclusionWriter {
  private readonly stopping = new AbortController();
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly attemptTimeoutMs: number;
  // writing an end with its recording keeps the conclusion thread and a Postgres backend busy: one
  // attempt at a time, so calls that ended at the same moment do not take the CPU from the live calls'
  // audio (bench/calls-ws/conclude: 50 ends land within 3 s this way). A slot is held per attempt, not
  // across the pauses between retries, so an end that keeps failing does not hold up the others.
  private readonly recordedWrites = createLimiter(1);

  constructor(
    private readonly db: Db,
    /** where the conclusion thread writes the ends with a recording (the same database as `db`) */
    private readonly databaseUrl: string,
    readonly spool: ConclusionSpool,
    options: ConclusionWriterOptions = {},
  ) {
    this.retryBaseMs = options.retryBaseMs ?? 250;
    // while the database is away an attempt fails at once (deadline-sql.ts): a retry every second costs
    // nothing and lands the end within a second of its return
    this.retryMaxMs = options.retryMaxMs ?? 1_000;
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
    return this.untilLanded(pending, kept);
  }

  private async untilLanded(pending: PendingEnd, kept: boolean): Promise<boolean> {
    const callId = pending.task.callId;
    for (let attempt = 1; ; attempt++) {
      try {
        await (pending.recording ? this.recordedWrites(() => this.attempt(pending)) : this.attempt(pending));
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
  private attempt(pending: PendingEnd): Promise<void> {
    // a recording's megabytes are read, encoded and sent to the database off the event loop
    const write = pending.recording ? writeRecordedCallEnd(this.databaseUrl, pending) : writeCallEnd(this.db, pending);
    write.catch(() => {}); // its failure is reported through the race below, or no longer matters
    // a recording adds its encoding and upload: a second per MB on top, so a long call is not cut off
    const timeoutMs = this.attemptTimeoutMs + Math.ceil((pending.recording?.bytes ?? 0) / 1e6) * 1000;
    const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(timeoutMs)]);
    return new Promise((resolve, reject) => {
      const onAbort = () =>
        reject(new Error(this.stopping.signal.aborted ? "stopped" : `no answer within ${timeoutMs} ms`));
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      write.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
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
