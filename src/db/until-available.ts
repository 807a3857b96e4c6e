// Start-up steps that need the database wait for it instead of ending the process: retried with a
// capped backoff while Postgres is away, one line when the wait starts and one when it ends.
import { describeError } from "../errors";
import { log } from "../log";
import { isDatabaseUnavailable } from "./unavailable";
import { backoffMs } from "../lib/backoff";

export type UntilOptions = { baseMs?: number; maxMs?: number; signal?: AbortSignal };

/** Runs `step` until it succeeds; a failure other than "the database is away" is thrown as it is. */
export async function untilDatabase<T>(what: string, step: () => Promise<T>, options: UntilOptions = {}): Promise<T> {
  const { baseMs = 250, maxMs = 5_000, signal } = options;
  let waitingSince: number | null = null;
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await step();
      if (waitingSince !== null)
        log.info("database reachable: going on", {
          step: what,
          waitedMs: Math.round(performance.now() - waitingSince),
        });
      return result;
    } catch (error) {
      if (!isDatabaseUnavailable(error) || signal?.aborted) throw error;
      if (waitingSince === null) {
        waitingSince = performance.now();
        log.warn("database unreachable: waiting for it", { step: what, error: describeError(error) });
      }
    }
    await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt, baseMs, maxMs)));
  }
}
