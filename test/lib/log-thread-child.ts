// Child of log-thread.test.ts: logs LINES lines at once through the log thread, says on stderr when its
// event loop is free again, then exits (the exit waits for the thread to write what it holds).
import { log, logFromThread } from "../../src/log";

logFromThread({ maxQueuedBytes: Number(process.env.MAX_QUEUED_BYTES) || undefined });
const lines = Number(process.env.LINES);
const padding = "x".repeat(200);
for (let i = 0; i < lines; i++) log.info("line", { i, padding });
setTimeout(() => {
  process.stderr.write("loop free\n");
  // exit once the parent reads again (it says so on stdin)
  process.stdin.once("data", () => {
    log.info("last");
    process.exit(0);
  });
}, 0);
