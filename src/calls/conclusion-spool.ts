// The end of a call that has not reached the database yet, kept as one file per call in the bridge's
// spool directory: written before the first attempt, removed once the conclusion has landed, replayed
// by the next start of the same bridge instance when the process had to exit before.
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { FinishedRecording } from "../audio/call-recorder";
import type { CallTask, Conclusion } from "./call-lifecycle";

/**
 * What it takes to write a call's end: call_started if it is still missing, then the conclusion, whose
 * event gets the recording (a WAV file next to the spool) when it is written.
 */
export type PendingEnd = {
  task: CallTask;
  startedAt: number | null;
  conclusion: Omit<Conclusion, "recorded">;
  recording: FinishedRecording | null;
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

  async drop(callId: string) {
    await rm(this.fileOf(callId), { force: true });
  }

  /** Every kept end; a file that cannot be read is left where it is and logged by the caller. */
  async list(): Promise<{ callId: string; read: () => Promise<PendingEnd> }[]> {
    const names = await readdir(this.dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [];
      throw error;
    });
    return names
      .filter((name) => name.endsWith(".json"))
      .map((name) => ({
        callId: name.slice(0, -".json".length),
        read: async () => JSON.parse(await readFile(join(this.dir, name), "utf8")) as PendingEnd,
      }));
  }

  private fileOf(callId: string) {
    return join(this.dir, `${callId}.json`);
  }
}
