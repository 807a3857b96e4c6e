// A SIP call that never got to run (refused after its slot was reserved, cancelled, an outbound call
// that was not answered) is closed here: its slot must not stay taken, so a transient database error
// (deadlock) is retried a few times, and a database that is away is waited for (capped backoff).
import { concludeCallTask } from "../calls/call-lifecycle";
import type { Db } from "../db/client";
import { isDatabaseUnavailable } from "../db/unavailable";
import { describeError } from "../errors";
import { log } from "../log";
import { backoffMs } from "../lib/backoff";

export async function closeUnanswered(
  db: Db,
  task: Parameters<typeof concludeCallTask>[1],
  conclusion: Parameters<typeof concludeCallTask>[2],
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await concludeCallTask(db, task, conclusion);
    } catch (error) {
      if (attempt >= 5 && !isDatabaseUnavailable(error)) throw error;
      if (attempt <= 5 || attempt % 10 === 0)
        log.warn("call", {
          callId: conclusion.event.callId,
          event: "close_retry",
          attempt,
          error: describeError(error),
        });
      await Bun.sleep(backoffMs(attempt - 1, 100, 5_000));
    }
  }
}
