// The end of a call is written until it lands: kept in the spool first, then written (call_started if
// still missing, then the conclusion) with a growing delay between attempts while the database cannot
// be reached. A stop (shutdown) leaves what has not landed in the spool for the next start to replay.
// With RECORDING_STORE=s3 the recording goes to the bucket (recording-uploads.ts): the conclusion carries
// it when its upload is done within the wait it is given, and goes without it otherwise.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { FinishedRecording } from "../audio/call-recorder";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { describeError } from "../errors";
import { createLimiter } from "../lib/limiter";
import { pause } from "../lib/pause";
import { within } from "../lib/within";
import { log } from "../log";
import { recordingObjectsOf, type RecordingObjects } from "../storage/recording-objects";
import type { CallTask } from "./call-lifecycle";
import type { ConclusionSpool, PendingEnd } from "./conclusion-spool";
import { writeRecordedCallEnd } from "./conclusion-thread";
import { RecordingUploads, type RecordingUploadsOptions } from "./recording-uploads";
import { writeCallEnd, type EndRecording } from "./write-call-end";
import { backoffMs } from "../lib/backoff";

/** RECORDING_STORE=s3: the bucket, and what the hooks get of it. */
export type ObjectStore = {
  objects: RecordingObjects;
  /** the base64 audio goes into call_concluded beside its URL */
  inHooks: boolean;
  /** how long the hook's presigned URL is valid */
  hookUrlTtlSeconds: number;
  /** how long a replayed end waits for its recording's upload (a live call's end waits until its deadline) */
  replayWaitMs: number;
  uploads?: RecordingUploadsOptions;
};

export type ConclusionWriterOptions = {
  retryBaseMs?: number;
  retryMaxMs?: number;
  attemptTimeoutMs?: number;
  objectStore?: ObjectStore | null;
};

/** The upload a call's end began (ConclusionWriter.beginUpload): its key, waited for until `until` (performance.now()). */
export type StartedUpload = { key: Promise<string | null>; until: number };

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
  private readonly store: ObjectStore | null;
  private readonly uploads: RecordingUploads | null;

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
    this.store = options.objectStore ?? null;
    this.uploads = this.store && new RecordingUploads(this.store.objects, db, spool, this.store.uploads);
  }

  /**
   * At a call's end, before its summary (s3): the recording moves into the spool and its upload begins,
   * waited for by the conclusion until `waitMs` from now. Postgres: nothing to begin.
   */
  async beginUpload(task: CallTask, recording: FinishedRecording | null, waitMs: number) {
    if (!this.uploads || !recording) return { recording, upload: null };
    const { recording: spooled, key } = await this.uploads.begin(task, recording);
    return { recording: spooled, upload: { key, until: performance.now() + waitMs } satisfies StartedUpload };
  }

  /**
   * Resolves true once the end is in the database (or the task was already closed by someone else),
   * false when the writer was stopped first: then the end stays in the spool. Never throws.
   */
  async conclude(pending: PendingEnd, upload: StartedUpload | null = null): Promise<boolean> {
    const callId = pending.task.callId;
    const kept = await this.spool.keep(pending).then(
      () => true,
      (error) => {
        log.error("call end not spooled", { callId, error: describeError(error) });
        return false;
      },
    );
    if (pending.concluded && pending.recording) {
      this.uploads?.later({ ...pending, recording: pending.recording });
      return true;
    }
    let inFlight: Promise<string | null> | null = null;
    if (this.uploads && pending.recording && !pending.objectKey) {
      const started = upload ?? {
        key: this.uploads.begin(pending.task, pending.recording).then((begun) => begun.key),
        until: performance.now() + this.store!.replayWaitMs,
      };
      const key = await within(started.key, Math.max(0, started.until - performance.now()), "upload").catch(() => null);
      if (key) pending = { ...pending, objectKey: key };
      else inFlight = started.key;
    }
    return this.untilLanded(pending, kept, inFlight);
  }

  private async untilLanded(
    pending: PendingEnd,
    kept: boolean,
    inFlight: Promise<string | null> | null,
  ): Promise<boolean> {
    const callId = pending.task.callId;
    const recording = this.endRecording(pending);
    for (let attempt = 1; ; attempt++) {
      try {
        await (recording?.path
          ? this.recordedWrites(() => this.attempt(pending, recording))
          : this.attempt(pending, recording));
        if (attempt > 1) log.info("call", { callId, event: "conclusion_landed", attempts: attempt });
        if (this.uploads && pending.recording && !pending.objectKey) {
          // the recording is not in the bucket yet: it stays in the spool until it is
          this.uploads.later({ ...pending, recording: pending.recording }, inFlight);
          return true;
        }
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
      if (!(await pause(backoffMs(attempt - 1, this.retryBaseMs, this.retryMaxMs), this.stopping.signal))) {
        log.warn("call", { callId, event: "conclusion_spooled", spooled: kept });
        return false;
      }
    }
  }

  /** What the end carries of its recording: none while an s3 upload is still to be done. */
  private endRecording({ recording, objectKey }: PendingEnd): EndRecording | null {
    if (!recording) return null;
    const { path, contentType, bytes } = recording;
    if (!this.store) return { store: "postgres", path, contentType };
    if (!objectKey) return null;
    // signed at each attempt: a conclusion that lands late still hands out a URL valid for its full time
    const url = this.store.objects.presign(objectKey, this.store.hookUrlTtlSeconds);
    return { store: "s3", path: this.store.inHooks ? path : null, contentType, objectKey, objectBytes: bytes, url };
  }

  /** The ends a previous run of this instance kept: each written (retried until it lands or stop). */
  async replay(): Promise<number> {
    await this.spool
      .removeOrphanRecordings()
      .catch((error) => log.warn("spool recordings not cleaned", { error: describeError(error) }));
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

  /** Stops retrying: ends (and recordings) still waiting stay in the spool. */
  stop() {
    this.stopping.abort();
    this.uploads?.stop();
  }

  /**
   * One write, given up after the time-out or at stop: a connection to a database that went away can
   * hang instead of failing. The write may still commit later; writing the end again is harmless.
   */
  private attempt(pending: PendingEnd, recording: EndRecording | null): Promise<void> {
    // a recording's megabytes are read, encoded and sent to the database off the event loop
    const write = recording?.path
      ? writeRecordedCallEnd(this.databaseUrl, pending, recording)
      : writeCallEnd(this.db, pending, recording);
    write.catch(() => {}); // its failure is reported through the race below, or no longer matters
    // a recording adds its encoding and upload: a second per MB on top, so a long call is not cut off
    const readBytes = recording?.path ? (pending.recording?.bytes ?? 0) : 0;
    const timeoutMs = this.attemptTimeoutMs + Math.ceil(readBytes / 1e6) * 1000;
    const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(timeoutMs)]);
    return new Promise((resolve, reject) => {
      const onAbort = () =>
        reject(new Error(this.stopping.signal.aborted ? "stopped" : `no answer within ${timeoutMs} ms`));
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      write.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }
}

const instanceDir = (config: Config, kind: string) =>
  join(config.bridge.dataDir, kind, config.bridge.instanceId.replace(/[^\w.-]/g, "_"));

/** Where an instance keeps its unwritten call ends: its own folder, so instances never share one. */
export const spoolDirOf = (config: Config) => instanceDir(config, "spool");

/** Where an instance writes the recordings of its calls while they run and until they are concluded. */
export const recordingDirOf = (config: Config) => instanceDir(config, "recordings");

/** RECORDING_STORE=s3: the bucket the writer uploads recordings to; null keeps them in Postgres. */
export function objectStoreOf(config: Config): ObjectStore | null {
  const { recordingStore } = config;
  const objects = recordingStore.kind === "s3" ? recordingObjectsOf(config) : null;
  if (!objects) return null;
  return {
    objects,
    inHooks: recordingStore.inHooks,
    // a hook is delivered, and retried, well after the call: its URL lives twelve times the API's
    hookUrlTtlSeconds: recordingStore.urlTtlSeconds * 12,
    replayWaitMs: 5_000,
  };
}
