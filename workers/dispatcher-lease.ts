// A dispatcher's lease: a Postgres advisory lock held on one reserved connection for as long as the
// dispatcher runs. Its claims carry the lease key (hook_deliveries.claimed_by). When the process dies its
// session ends and the lock goes with it, so other dispatchers take over its claimed runs at once
// (claim-runs.ts), not after a time-out.
import { randomInt } from "node:crypto";
import type { ReservedSql, Sql } from "postgres";

/** The first half of every lease's two-key advisory lock ("hook"), the second half is the lease key. */
export const LEASE_LOCK_CLASS = 0x686f6f6b;

export type DispatcherLease = {
  readonly key: number;
  /** Whether this session still holds the lock (false once its connection broke). */
  held(): Promise<boolean>;
  /** Ends the lease: its claims become free for every dispatcher at once (idempotent). */
  release(): Promise<void>;
};

export async function acquireLease(sql: Sql): Promise<DispatcherLease> {
  for (;;) {
    const conn: ReservedSql = await sql.reserve();
    const key = randomInt(1, 2 ** 31 - 1);
    const [row] = await conn`select pg_try_advisory_lock(${LEASE_LOCK_CLASS}::int, ${key}::int) as ok`;
    // another live dispatcher drew the same key: draw again
    if (!row?.ok) {
      conn.release();
      continue;
    }
    let released = false;
    return {
      key,
      async held() {
        try {
          const [r] = await conn`
            select count(*)::int as n from pg_locks
            where pid = pg_backend_pid() and locktype = 'advisory' and granted
              and classid::bigint = ${LEASE_LOCK_CLASS} and objid::bigint = ${key} and objsubid = 2`;
          return r?.n === 1;
        } catch {
          return false;
        }
      },
      async release() {
        if (released) return;
        released = true;
        await conn`select pg_advisory_unlock(${LEASE_LOCK_CLASS}::int, ${key}::int)`.catch(() => {});
        conn.release();
      },
    };
  }
}
