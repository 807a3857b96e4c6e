// The end of a call that has not reached the database yet, kept as one file per call in the bridge's
// spool directory: written before the first attempt, removed once the conclusion has landed, replayed
// by the next start of the same bridge instance when the process had to exit before. With
// RECORDING_STORE=s3 the call's recording waits beside it (<callId>.wav) until it is in the bucket.
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { FinishedRecording } from "../audio/call-recorder";
import type { CallTask, Conclusion } from "./call-lifecycle";

/**
 * What it takes to write a call's end: call_started if it is still missing, then the conclusion, whose
 * event gets the recording (a WAV file) when it is written.
 */
export type PendingEnd = {
  task: CallTask;
  startedAt: number | null;
  conclusion: Omit<Conclusion, "recorded">;
  recording: FinishedRecording | null;
  /** s3: the recording's object, once it is in the bucket */
  objectKey?: string;
  /** s3: the conclusion landed without the recording, which waits here to be uploaded */
  concluded?: boolean;
};

export class ConclusionSpool {
  constructor(readonly dir: string) {}

  /** Writes the file whole or not at all (a crash mid-write leaves only a temporary file behind). */
  async keep(pending: PendingEnd) {
    await mkdir(this.dir, { recursive: true });
    const file = this.fileOf(pending.task.callId);
    await writeFile(`${file}.tmp`, JSON.stringify(pending));
    await rename(`${file}.tmp`, file);
  }

  /** Moves a finished call's recording into the spool, where it outlives restarts until it is uploaded. */
  async adoptRecording(callId: string, recording: FinishedRecording): Promise<FinishedRecording> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, `${callId}.wav`);
    await rename(recording.path, path);
    return { ...recording, path };
  }

  async drop(callId: string) {
    await rm(this.fileOf(callId), { force: true });
  }

  /** Every kept end; a file that cannot be read is left where it is and logged by the caller. */
  async list(): Promise<{ callId: string; read: () => Promise<PendingEnd> }[]> {
    const names = await this.names();
    return names
      .filter((name) => name.endsWith(".json"))
      .map((name) => ({
        callId: name.slice(0, -".json".length),
        read: async () => JSON.parse(await readFile(join(this.dir, name), "utf8")) as PendingEnd,
      }));
  }

  /** Removes recordings whose end was never kept (the process stopped during the call's summary). */
  async removeOrphanRecordings() {
    const names = new Set(await this.names());
    for (const name of names)
      if (name.endsWith(".wav") && !names.has(`${name.slice(0, -".wav".length)}.json`))
        await rm(join(this.dir, name), { force: true });
  }

  private names() {
    return readdir(this.dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [] as string[];
      throw error;
    });
  }

  private fileOf(callId: string) {
    return join(this.dir, `${callId}.json`);
  }
}
