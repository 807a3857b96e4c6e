// Claims delivery runs whose workflow does not exist yet, for one dispatcher, safely with several worker
// processes: the rows are locked with SKIP LOCKED, so two dispatchers never claim the same run at once.
// Claimable: a run nobody claimed, or one whose claimer is gone (its lease lock is no longer held) or
// has held it longer than one attempt can take (a dispatcher that lost track of it).
import { and, asc, getTableColumns, inArray, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../src/db/client";
import { preparedQuery } from "../src/db/prepared";
import { hookDeliveries, hookEventBodies, type HookDeliveryRow } from "../src/db/schema";
import { LEASE_LOCK_CLASS } from "./dispatcher-lease";

/** A claimed run, with its body when its attempt 1 is still to be made (the attempt reads nothing more). */
export type ClaimedRun = HookDeliveryRow & { payload: string | null };
export type Claims = ReturnType<typeof runClaims>;

/** The dispatcher's two claims, built (and prepared) once: they run for every few attempts of a burst. */
export function runClaims(db: Db) {
  // Postgres' clock for both sides of the comparison: workers' clocks never matter
  const liveLeases = sql`array(select objid::bigint from pg_locks
    where locktype = 'advisory' and granted and classid::bigint = ${LEASE_LOCK_CLASS} and objsubid = 2)`;
  /**
   * New runs only (nobody claimed them), through the partial index on them: what every NOTIFY and every
   * finished attempt asks for, so it must not cost more as claimed runs pile up behind Temporal.
   */
  const newRuns = claim(
    db,
    "hook_delivery_claim_new",
    and(isNull(hookDeliveries.dispatchedAt), isNull(hookDeliveries.claimedAt))!,
  );
  /** New runs and the runs of lost or stuck claimers (the periodic sweep). */
  const anyRuns = claim(
    db,
    "hook_delivery_claim",
    and(
      isNull(hookDeliveries.dispatchedAt),
      or(
        isNull(hookDeliveries.claimedAt),
        lt(
          hookDeliveries.claimedAt,
          sql`now() - make_interval(secs => ${sql.placeholder("graceS")}::double precision)`,
        ),
        sql`${hookDeliveries.claimedBy}::bigint <> all (${liveLeases})`,
      ),
    )!,
  );
  return {
    newRuns: (leaseKey: number, limit: number): Promise<ClaimedRun[]> => newRuns({ leaseKey, limit }),
    runs: (leaseKey: number, limit: number, graceMs: number): Promise<ClaimedRun[]> =>
      anyRuns({ leaseKey, limit, graceS: graceMs / 1000 }),
  };
}

function claim(db: Db, name: string, claimable: SQL) {
  const candidates = db
    .select({ id: hookDeliveries.id })
    .from(hookDeliveries)
    .where(claimable)
    .orderBy(asc(hookDeliveries.createdAt))
    .limit(sql.placeholder("limit"))
    .for("update", { skipLocked: true });
  const query = db
    .update(hookDeliveries)
    .set({
      claimedAt: sql`now()`,
      claimedBy: sql`${sql.placeholder("leaseKey")}::int`,
    })
    .where(inArray(hookDeliveries.id, candidates))
    .returning({
      ...getTableColumns(hookDeliveries),
      payload: sql<string | null>`case when ${hookDeliveries.status} = 'PENDING' and ${hookDeliveries.attemptCount} = 0
        then (select ${hookEventBodies.payload} from ${hookEventBodies} where ${hookEventBodies.id} = ${hookDeliveries.bodyId}) end`,
    });
  return preparedQuery(query, name);
}
