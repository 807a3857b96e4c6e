// A promise nobody handles that rejects would end the process (Bun's and Node's default), and with a
// bridge every call it carries. Each process logs it instead, as the bug it is, and goes on.
import { describeError } from "./errors";
import { log } from "./log";

/** From now on an unhandled rejection is one error line (what, as describeError says it, and where). */
export function logUnhandledRejections() {
  process.on("unhandledRejection", (reason) => {
    // the frames say where it came from; the stack's message line is left to describeError
    const frames = reason instanceof Error ? (reason.stack ?? "").split("\n").map((l) => l.trim()) : [];
    const at = frames.filter((l) => l.startsWith("at ")).slice(0, 5);
    log.error("unhandled promise rejection", { error: describeError(reason), at });
  });
}
