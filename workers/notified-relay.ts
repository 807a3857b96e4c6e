// Hands what Postgres holds to Temporal, for the worker: runs `relay` with the worker's Temporal target
// at once on a NOTIFY of `channel` (sent by the API in the transaction that wrote the row), whenever the
// worker (re)connects to Temporal, and every `sweepMs` for a NOTIFY that was missed (the worker down or
// away from Temporal). Runs never overlap; a request while one runs makes one more.
import type { Sql } from "postgres";
import { listenAlways } from "../src/db/listen";
import { describeError } from "../src/errors";
import { coalescingRunner } from "../src/lib/coalescing-runner";
import { log } from "../src/log";

export type NotifiedRelay<T> = {
  /** The worker's Temporal target once it is connected (null while it is not); relays at once. */
  attach(next: T | null): void;
  stop(): Promise<void>;
};

export function startNotifiedRelay<T>(options: {
  sql: Sql;
  channel: string;
  sweepMs: number;
  relay: (target: T) => Promise<void>;
  /** the warning logged when a run fails (the next NOTIFY, connect or sweep tries again) */
  failed: string;
}): NotifiedRelay<T> {
  let target: T | null = null;
  const runner = coalescingRunner(
    async () => {
      const t = target;
      if (t) await options.relay(t);
    },
    (error) => log.warn(options.failed, { error: describeError(error) }),
  );
  const listening = listenAlways(
    options.sql,
    options.channel,
    () => runner.request(),
    () => runner.request(),
  );
  const sweep = setInterval(() => runner.request(), options.sweepMs);
  return {
    attach(next) {
      target = next;
      if (next) runner.request();
    },
    async stop() {
      clearInterval(sweep);
      await listening.unlisten();
      await runner.stop();
    },
  };
}
