// Serialises conditional writes to one resource across every API instance: a transaction-scoped
// Postgres advisory lock, held from the If-Match check until the response is sent, so two writers with
// the same ETag cannot both pass the check. Few holders at once per process, so the locks never take
// every pooled connection from the writes they wait for; a holder that is never released lets go after
// maxHoldMs.
import type { Sql } from "postgres";
import { createLimiter } from "../lib/limiter";

export type WriteLock = (name: string) => Promise<() => void>;

export function createWriteLocks(sql: Sql, { holders = 3, maxHoldMs = 30_000 } = {}): WriteLock {
  const limit = createLimiter(holders);
  return async (name) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const timer = setTimeout(release, maxHoldMs);
    // settles once the lock is held (or could not be taken); the transaction lives on until release
    await new Promise<void>((resolve, reject) => {
      void limit(() =>
        sql.begin(async (tx) => {
          await tx`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`;
          resolve();
          await released;
        }),
      )
        .catch(reject)
        .finally(() => clearTimeout(timer));
    });
    return release;
  };
}
