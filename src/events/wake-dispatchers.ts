// The wake-up of the hook dispatchers, sent after the outbox rows commit instead of inside their
// transaction: Postgres serialises the commits of transactions that NOTIFY (a queue lock held until
// the commit record is flushed), so concurrent outbox writes could not share a WAL flush and ran ~5x
// slower (docs/hooks.md, "What made the outbox write slow"). One NOTIFY at a time per database handle (one per
// process): the dispatcher claims every waiting row on any wake-up, so writes that commit while one is
// on its way need just one more after it. A lost wake-up only delays: the dispatcher also sweeps every
// second. Sent on the process's signalling connection: on the pool it queued behind the very burst of
// writes it announces (2,000 emits: first attempt p50 2.1 s instead of 1.0 s).
import { signallingOf, type Db } from "../db/client";
import { describeError } from "../errors";
import { coalescingRunner, type CoalescingRunner } from "../lib/coalescing-runner";
import { log } from "../log";

export const HOOK_DELIVERIES_CHANNEL = "hook_deliveries";

const runners = new WeakMap<Db, CoalescingRunner>();

/** Asks for a NOTIFY to the dispatchers; returns at once. Call it after the commit of new outbox rows. */
export function wakeHookDispatchers(db: Db): void {
  let runner = runners.get(db);
  if (!runner) {
    runner = coalescingRunner(
      async () => void (await signallingOf(db)`select pg_notify(${HOOK_DELIVERIES_CHANNEL}, '')`),
      (error) => log.warn("hook dispatchers not woken; their sweep takes the rows up", { error: describeError(error) }),
    );
    runners.set(db, runner);
  }
  runner.request();
}
