// Claims delivery runs whose workflow does not exist yet, for one dispatcher, safely with several worker
// processes: the rows are locked with SKIP LOCKED, so two dispatchers never claim the same run at once.
// Claimable: a run nobody claimed, or one whose claimer is gone (its lease lock is no longer held) or
// has held it longer than one attempt can take (a dispatcher that lost track of it).
import { and, asc, inArray, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../src/db/client";
import { hookDeliveries } from "../src/db/schema";
import { LEASE_LOCK_CLASS } from "./dispatcher-lease";
import { deliveryRunColumns, type DeliveryRunRow, type RunProgress } from "./start-delivery-run";

export type ClaimedRun = DeliveryRunRow & RunProgress;

/**
 * New runs only (nobody claimed them), through the partial index on them: what every NOTIFY and every
 * finished attempt asks for, so it must not cost more as claimed runs pile up behind Temporal.
 */
export function claimNewRuns(db: Db, leaseKey: number, limit: number): Promise<ClaimedRun[]> {
  return claim(db, leaseKey, limit, and(isNull(hookDeliveries.dispatchedAt), isNull(hookDeliveries.claimedAt))!);
}

/** New runs and the runs of lost or stuck claimers (the periodic sweep). */
export function claimRuns(db: Db, leaseKey: number, limit: number, graceMs: number): Promise<ClaimedRun[]> {
  // Postgres' clock for both sides of the comparison: workers' clocks never matter
  const liveLeases = sql`array(select objid::bigint from pg_locks
    where locktype = 'advisory' and granted and classid::bigint = ${LEASE_LOCK_CLASS} and objsubid = 2)`;
  const claimable = and(
    isNull(hookDeliveries.dispatchedAt),
    or(
      isNull(hookDeliveries.claimedAt),
      lt(hookDeliveries.claimedAt, sql`now() - make_interval(secs => ${graceMs / 1000}::double precision)`),
      sql`${hookDeliveries.claimedBy}::bigint <> all (${liveLeases})`,
    ),
  )!;
  return claim(db, leaseKey, limit, claimable);
}

async function claim(db: Db, leaseKey: number, limit: number, claimable: SQL): Promise<ClaimedRun[]> {
  const candidates = db
    .select({ id: hookDeliveries.id })
    .from(hookDeliveries)
    .where(claimable)
    .orderBy(asc(hookDeliveries.createdAt))
    .limit(limit)
    .for("update", { skipLocked: true });
  return db
    .update(hookDeliveries)
    .set({ claimedAt: sql`now()`, claimedBy: leaseKey })
    .where(inArray(hookDeliveries.id, candidates))
    .returning({
      ...deliveryRunColumns,
      status: hookDeliveries.status,
      attemptCount: hookDeliveries.attemptCount,
      nextAttemptAt: hookDeliveries.nextAttemptAt,
    });
}
