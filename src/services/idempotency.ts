// The rows behind Idempotency-Key: claim a key (one INSERT ... ON CONFLICT, so two simultaneous first
// requests on any instances cannot both win), keep the response, or give the claim back.
import { randomUUID } from "node:crypto";
import { and, eq, isNull, lt, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { deleteInBatches } from "../db/delete-in-batches";
import { executePrepared } from "../db/prepared";
import { idempotencyKeys, type IdempotencyKeyRow } from "../db/schema";
import { describeError } from "../errors";
import { log } from "../log";

/** How long a first response is kept (design.md: 24 h). */
export const IDEMPOTENCY_TTL_HOURS = 24;

export type KeyId = Pick<IdempotencyKeyRow, "scope" | "method" | "path" | "key">;
export type Claim = KeyId & { claimToken: string };
export type Existing = Pick<IdempotencyKeyRow, "requestHash" | "status" | "response">;

const sameKey = (id: KeyId) =>
  and(
    eq(idempotencyKeys.scope, id.scope),
    eq(idempotencyKeys.method, id.method),
    eq(idempotencyKeys.path, id.path),
    eq(idempotencyKeys.key, id.key),
  );

/**
 * Claims the key for this request, or returns the row that holds it. An expired row (the cleanup has not
 * reached it yet) is taken over in the same statement. A claim left open by a request that died is not:
 * whether it acted cannot be known, so its key answers 409 until it expires (docs/api.md).
 *
 * The claim commits without waiting for its WAL flush (synchronous_commit off for this statement only):
 * visibility to other sessions is immediate, so the mutual exclusion is unchanged, and the action's own
 * synchronous commit, later in the WAL, flushes the claim with it. This halves the added latency (bench/api).
 * Claim and keep run as prepared statements (parsed and planned once per connection, not per request).
 */
export async function claimKey(
  db: DbOrTx,
  id: KeyId,
  requestHash: string,
): Promise<{ claim: Claim } | { existing: Existing }> {
  // a row deleted between the two statements (a released claim) is claimed on the next round
  for (;;) {
    const claimToken = randomUUID();
    const claimed = await executePrepared(
      db,
      sql`
      insert into ${idempotencyKeys} (scope, method, path, key, request_hash, claim_token, expires_at)
      select ${id.scope}, ${id.method}, ${id.path}, ${id.key}, ${requestHash}, ${claimToken},
        now() + make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})
      from (select set_config('synchronous_commit', 'off', true)) as async_commit
      on conflict (scope, method, path, key) do update
        set request_hash = excluded.request_hash, claim_token = excluded.claim_token, status = null,
          response = null, claimed_at = now(), expires_at = excluded.expires_at
        where ${idempotencyKeys}.expires_at <= now()
      returning 1`,
    );
    if (claimed.length > 0) return { claim: { ...id, claimToken } };
    const [existing] = await db
      .select({
        requestHash: idempotencyKeys.requestHash,
        status: idempotencyKeys.status,
        response: idempotencyKeys.response,
      })
      .from(idempotencyKeys)
      .where(sameKey(id));
    if (existing) return { existing };
  }
}

const ours = (claim: Claim) =>
  and(sameKey(claim), isNull(idempotencyKeys.status), eq(idempotencyKeys.claimToken, claim.claimToken));

/** Keeps the first response (already sealed) under the claim; committed like the claim (see claimKey). */
export async function keepResponse(db: DbOrTx, claim: Claim, status: number, sealed: string) {
  await executePrepared(
    db,
    sql`
    with async_commit as (select set_config('synchronous_commit', 'off', true))
    update ${idempotencyKeys} set status = ${status}, response = ${sealed}
    from async_commit
    where ${ours(claim)}`,
  );
}

/** Gives the key back: the request's outcome is not one to replay (5xx, 401, 403). */
export async function releaseClaim(db: DbOrTx, claim: Claim) {
  await db.delete(idempotencyKeys).where(ours(claim));
}

/** How many expired keys one statement of the cleanup deletes. */
export const EXPIRED_KEYS_BATCH = 1_000;

/** Deletes the keys whose 24 h are over, in batches; returns how many went. */
export const deleteExpiredKeys = (db: DbOrTx) =>
  deleteInBatches(db, idempotencyKeys, lt(idempotencyKeys.expiresAt, sql`now()`), EXPIRED_KEYS_BATCH);

const cleanupEveryMs = 15 * 60_000;

/** Runs the cleanup now and every 15 minutes (any number of worker processes may run it). */
export function startIdempotencyKeyCleanup(db: DbOrTx) {
  const run = () =>
    deleteExpiredKeys(db).then(
      (deleted) => deleted > 0 && log.info("idempotency keys expired", { deleted }),
      (error) => log.warn("idempotency key cleanup failed", { error: describeError(error) }),
    );
  void run();
  const timer = setInterval(run, cleanupEveryMs);
  return () => clearInterval(timer);
}
