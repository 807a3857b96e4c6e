// One restart rule for every child a supervisor keeps running (`bun run start`'s worker and bridge,
// the bridge's worker processes): a child that lived `healthyAfterMs` restarts at once; one that keeps
// dying right after its start waits 0.5 s, 1 s, 2 s ... up to `maxMs`, so a crash loop never spins.
import { backoffMs } from "./backoff";

export type RestartPolicy = { healthyAfterMs: number; maxMs: number };

export const defaultRestartPolicy: RestartPolicy = { healthyAfterMs: 10_000, maxMs: 30_000 };

export function restartBackoff(policy: RestartPolicy = defaultRestartPolicy) {
  let failures = 0;
  let startedAt = 0;
  return {
    started() {
      startedAt = performance.now();
    },
    /** After an exit: how long the child lived and how long to wait before starting it again. */
    exited() {
      const livedMs = Math.round(performance.now() - startedAt);
      failures = livedMs >= policy.healthyAfterMs ? 0 : failures + 1;
      const delayMs = failures === 0 ? 0 : backoffMs(failures - 1, 500, policy.maxMs);
      return { livedMs, delayMs };
    },
  };
}
