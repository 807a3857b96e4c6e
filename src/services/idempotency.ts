// The rows behind Idempotency-Key: claim a key (one INSERT ... ON CONFLICT, so two simultaneous first
// requests on any instances cannot both win), keep the response, or give the claim back.
import { randomUUID } from "node:crypto";
import { and, eq, isNull, lt, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { idempotencyKeys, type IdempotencyKeyRow } from "../db/schema";
import { describeError } from "../errors";
import { log } from "../log";

/** How long a first response is kept (design.md: 24 h). */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** A claim still open after this long belongs to a request that died with its process: a retry takes it over. */
const STALE_CLAIM_SECONDS = 300;

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
 * Claims the key for this request, or returns the row that holds it. An expired row, or a claim left
 * open by a dead request, is taken over in the same statement.
 */
export async function claimKey(
  db: DbOrTx,
  id: KeyId,
  requestHash: string,
): Promise<{ claim: Claim } | { existing: Existing }> {
  // a row deleted between the two statements (a released claim) is claimed on the next round
  for (;;) {
    const claimToken = randomUUID();
    const [claimed] = await db
      .insert(idempotencyKeys)
      .values({
        ...id,
        requestHash,
        claimToken,
        expiresAt: sql`now() + make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`,
      })
      .onConflictDoUpdate({
        target: [idempotencyKeys.scope, idempotencyKeys.method, idempotencyKeys.path, idempotencyKeys.key],
        set: {
          requestHash,
          claimToken,
          status: null,
          response: null,
          claimedAt: sql`now()`,
          expiresAt: sql`excluded.expires_at`,
        },
        setWhere: sql`${idempotencyKeys.expiresAt} <= now() or (${idempotencyKeys.status} is null and ${idempotencyKeys.claimedAt} < now() - make_interval(secs => ${STALE_CLAIM_SECONDS}))`,
      })
      .returning({ claimToken: idempotencyKeys.claimToken });
    if (claimed) return { claim: { ...id, claimToken } };
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

/** Keeps the first response (already sealed) under the claim. */
export async function keepResponse(db: DbOrTx, claim: Claim, status: number, sealed: string) {
  await db.update(idempotencyKeys).set({ status, response: sealed }).where(ours(claim));
}

/** Gives the key back: the request's outcome is not one to replay (5xx, 401, 403). */
export async function releaseClaim(db: DbOrTx, claim: Claim) {
  await db.delete(idempotencyKeys).where(ours(claim));
}

/** Deletes the keys whose 24 h are over; returns how many went. */
export async function deleteExpiredKeys(db: DbOrTx) {
  const gone = await db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.expiresAt, sql`now()`))
    .returning({ key: idempotencyKeys.key });
  return gone.length;
}

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
