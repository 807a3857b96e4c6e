// A dispatcher's lease: a Postgres advisory lock held on one reserved connection for as long as the
// dispatcher runs. Its claims carry the lease key (hook_deliveries.claimed_by). When the process dies its
// session ends and the lock goes with it, so other dispatchers take over its claimed runs at once
// (claim-runs.ts), not after a time-out.
import { randomInt } from "node:crypto";
import type { ReservedSql, Sql } from "postgres";
import { databaseWithin } from "../src/db/unavailable";

/** The first half of every lease's two-key advisory lock ("hook"), the second half is the lease key. */
export const LEASE_LOCK_CLASS = 0x686f6f6b;

export type DispatcherLease = {
  readonly key: number;
  /** Whether this session still holds the lock (false once its connection broke). */
  held(): Promise<boolean>;
  /** Ends the lease: its claims become free for every dispatcher at once (idempotent). */
  release(): Promise<void>;
};

/**
 * Statements on the reserved connection have no deadline of their own (deadline-sql.ts covers the
 * pool): each is bounded here, so a connection a partition silenced reads as a lost lease, not a hang.
 */
export async function acquireLease(sql: Sql, timeoutMs: number): Promise<DispatcherLease> {
  for (;;) {
    const reserving = sql.reserve();
    const conn: ReservedSql = await databaseWithin(reserving, timeoutMs, "reserving the lease connection").catch(
      (error) => {
        // one that comes after all goes back to the pool
        void reserving.then((late) => late.release()).catch(() => {});
        throw error;
      },
    );
    const key = randomInt(1, 2 ** 31 - 1);
    const [row] = await databaseWithin(
      conn`select pg_try_advisory_lock(${LEASE_LOCK_CLASS}::int, ${key}::int) as ok`,
      timeoutMs,
      "taking the lease",
    ).catch((error) => {
      conn.release();
      throw error;
    });
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
          const [r] = await databaseWithin(
            conn`
            select count(*)::int as n from pg_locks
            where pid = pg_backend_pid() and locktype = 'advisory' and granted
              and classid::bigint = ${LEASE_LOCK_CLASS} and objid::bigint = ${key} and objsubid = 2`,
            timeoutMs,
            "checking the lease",
          );
          return r?.n === 1;
        } catch {
          return false;
        }
      },
      async release() {
        if (released) return;
        released = true;
        await databaseWithin(
          conn`select pg_advisory_unlock(${LEASE_LOCK_CLASS}::int, ${key}::int)`,
          timeoutMs,
          "releasing the lease",
        ).catch(() => {});
        conn.release();
      },
    };
  }
}
