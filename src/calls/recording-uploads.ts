// RECORDING_STORE=s3: a finished call's recording goes from the spool into the bucket. The upload starts
// when the call ends, beside its summary; the conclusion takes it when it is done by then. When it is
// not (the store is away or slow), the conclusion goes without it and the recording waits in the spool:
// uploaded with a growing delay until it lands, then its row is written and the file removed. A stop
// leaves it in the spool for the next start of the bridge instance.
import { rm } from "node:fs/promises";
import { eq } from "drizzle-orm";
import type { FinishedRecording } from "../audio/call-recorder";
import type { Db } from "../db/client";
import { agentTasks } from "../db/schema";
import { describeError } from "../errors";
import { createLimiter } from "../lib/limiter";
import { pause } from "../lib/pause";
import { within } from "../lib/within";
import { log } from "../log";
import type { RecordingObjects } from "../storage/recording-objects";
import { storeCallRecording } from "./call-records";
import type { CallTask } from "./call-lifecycle";
import type { ConclusionSpool, PendingEnd } from "./conclusion-spool";
import { backoffMs } from "../lib/backoff";

export type RecordingUploadsOptions = {
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** one upload attempt, per MB of recording on top of a base: a store that hangs frees its slot */
  attemptTimeoutMs?: number;
};

export class RecordingUploads {
  private readonly stopping = new AbortController();
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly attemptTimeoutMs: number;
  // each upload holds up to a part (5 MiB) of its file: when many calls end at once, or the store comes
  // back to many waiting recordings, a few go at a time
  private readonly slots = createLimiter(4);

  constructor(
    private readonly objects: RecordingObjects,
    private readonly db: Db,
    private readonly spool: ConclusionSpool,
    options: RecordingUploadsOptions = {},
  ) {
    this.retryBaseMs = options.retryBaseMs ?? 1_000;
    this.retryMaxMs = options.retryMaxMs ?? 10_000;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000;
  }

  /** The recording moved into the spool and one attempt at its upload begun: resolves its key, null when it failed. */
  async begin(task: CallTask, recording: FinishedRecording) {
    const adopted = await this.spool.adoptRecording(task.callId, recording).catch((error) => {
      log.warn("call recording not moved to the spool", { callId: task.callId, error: describeError(error) });
      return recording;
    });
    const key = this.keyOf(task).then(
      async (key) => (key && (await this.attempt(task.callId, key, adopted)) ? key : null),
      () => null,
    );
    return { recording: adopted, key };
  }

  /** One upload; false when it failed (logged). */
  private attempt(callId: string, key: string, recording: FinishedRecording): Promise<boolean> {
    const timeoutMs = this.attemptTimeoutMs + Math.ceil(recording.bytes / 1e6) * 1000;
    const upload = this.slots(() =>
      within(this.objects.put(key, recording.path, recording.contentType), timeoutMs, "recording upload"),
    );
    return upload.then(
      () => true,
      (error) => {
        log.warn("call", { callId, event: "recording_upload_failed", error: describeError(error) });
        return false;
      },
    );
  }

  /**
   * The conclusion of `pending` landed without its recording: uploads it until that works (after
   * `inFlight`, the attempt still under way), then writes its row and removes it from the spool.
   */
  later(pending: PendingEnd & { recording: FinishedRecording }, inFlight: Promise<string | null> | null = null) {
    // a spool that cannot be written or read is logged; the recording stays where it is
    void this.untilStored(pending, inFlight).catch((error) =>
      log.error("call recording upload stopped", { callId: pending.task.callId, error: describeError(error) }),
    );
  }

  /** Stops retrying: what is not uploaded stays in the spool. */
  stop() {
    this.stopping.abort();
  }

  private async untilStored(
    pending: PendingEnd & { recording: FinishedRecording },
    inFlight: Promise<string | null> | null,
  ) {
    const { task, recording } = pending;
    await this.spool.keep({ ...pending, concluded: true });
    let attempts = inFlight ? 1 : 0;
    let key = inFlight ? await inFlight : null;
    if (!key) {
      const found = await this.retried("the recording's key", () => this.keyOf(task));
      if (found === undefined) return;
      // the call's task (its organization) was deleted meanwhile: its recording goes with it
      if (found === null) return this.forget(pending, "its agent task is gone");
      for (;;) {
        if (attempts > 0 && !(await pause(this.delay(attempts), this.stopping.signal))) return;
        attempts++;
        if (await this.attempt(task.callId, found, recording)) break;
      }
      key = found;
    }
    const row = { contentType: recording.contentType, objectKey: key, objectBytes: recording.bytes };
    const stored = await this.retried("the recording's row", async () => {
      await storeCallRecording(this.db, task.callId, row);
      return true;
    });
    if (!stored) return;
    await this.forget(pending, null);
    log.info("call", { callId: task.callId, event: "recording_uploaded", attempts });
  }

  /** `step` until it works (while the database is away); undefined when stopped first. */
  private async retried<T>(what: string, step: () => Promise<T>): Promise<T | undefined> {
    for (let tries = 1; ; tries++) {
      try {
        return await step();
      } catch (error) {
        if (tries === 1) log.warn(`${what} failed`, { error: describeError(error) });
        if (!(await pause(this.delay(tries), this.stopping.signal))) return undefined;
      }
    }
  }

  /** The end and its recording leave the spool (`why`: they were not stored, logged). */
  private async forget(pending: PendingEnd & { recording: FinishedRecording }, why: string | null) {
    if (why) log.warn("call recording dropped", { callId: pending.task.callId, why });
    await this.spool.drop(pending.task.callId);
    await rm(pending.recording.path, { force: true });
  }

  private delay(attempt: number) {
    return backoffMs(attempt - 1, this.retryBaseMs, this.retryMaxMs);
  }

  /** The call's object key (by its agent task's id); null when the task no longer exists. */
  private async keyOf(task: Pick<CallTask, "callId" | "organizationId">) {
    const [row] = await this.db
      .select({ id: agentTasks.id })
      .from(agentTasks)
      .where(eq(agentTasks.callId, task.callId));
    return row ? this.objects.keyOf(task.organizationId, row.id) : null;
  }
}
