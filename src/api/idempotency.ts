// Idempotency-Key on every POST (design.md, "HTTP conventions"; the IETF Idempotency-Key draft). Before
// anything else runs, the key is claimed in Postgres for (token scope, method, path, key): a repeat
// with the same body is answered with the kept first response (Idempotent-Replayed: true), another body
// is 422, a repeat while the first is still running is 409. The app's reply step hands every answer to
// finishIdempotentRequest, which keeps it (sealed) or gives the key back (5xx, 401, 403).
import { Elysia } from "elysia";
import { createHash } from "node:crypto";
import type { Deps } from "./deps";
import { readBodyText } from "./json-body";
import { AppError, describeError } from "../errors";
import { log } from "../log";
import type { Principal } from "../services/auth";
import { claimKey, keepResponse, releaseClaim, type Claim } from "../services/idempotency";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";
export const MAX_KEY_LENGTH = 255;

const badKey = (message: string) =>
  new AppError("BAD_REQUEST", `${IDEMPOTENCY_HEADER}: ${message}`, [{ field: IDEMPOTENCY_HEADER, message }]);

/** The header's key, or null without one; 400 naming the header for an empty, long or non-printable one. */
export function parseIdempotencyKey(value: string | null): string | null {
  if (value === null) return null;
  if (value.length === 0 || value.length > MAX_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(value))
    throw badKey(`1 to ${MAX_KEY_LENGTH} printable ASCII characters (0x20-0x7E)`);
  return value;
}

/** Tokens with the same reach share keys (design.md). */
export function scopeOf(principal: Principal): string {
  if (principal.kind === "admin") return "admin";
  return principal.kind === "vendor" ? `vendor:${principal.vendorId}` : `organization:${principal.organizationId}`;
}

/** Outcomes that say nothing about the request itself are not kept, so a retry runs again. */
const keeps = (status: number) => status < 500 && status !== 401 && status !== 403;

type Finish = (status: number, body: string) => Promise<void>;
const pending = new WeakMap<Request, Finish>();

/**
 * Called with every answer the app sends: keeps it under the request's claim, if it holds one. Never
 * throws: the answer goes out whatever happens here (a failure, such as the pool closed by a shutdown, is
 * logged, and the claim then stays until it expires, as a dead request's does).
 */
export async function finishIdempotentRequest(request: Request, status: number, body: string) {
  const finish = pending.get(request);
  if (!finish) return;
  pending.delete(request);
  await finish(status, body).catch((error) =>
    log.warn("idempotency: the response could not be kept, nor its key given back", {
      path: new URL(request.url).pathname,
      error: describeError(error),
    }),
  );
}

const replay = (status: number, body: string) =>
  new Response(body, {
    status,
    headers: { "content-type": "application/json; charset=utf-8", [REPLAYED_HEADER]: "true" },
  });

export const idempotency = (deps: Deps) =>
  new Elysia({ name: "idempotency" })
    .onRequest(async ({ request }) => {
      if (request.method !== "POST") return;
      const key = parseIdempotencyKey(request.headers.get(IDEMPOTENCY_HEADER));
      if (key === null) return;
      // kept responses are sealed: without a key to seal them there is nothing safe to keep
      if (!deps.config.encryptionKey)
        throw new AppError("UNAVAILABLE", `${IDEMPOTENCY_HEADER} needs the service's ENCRYPTION_KEY to be set`);
      const principal = await deps.tokens.resolve(request.headers.get("authorization"));
      const requestHash = createHash("sha256")
        .update(await readBodyText(request.clone() as Request))
        .digest("base64url");
      const id = { scope: scopeOf(principal), method: request.method, path: new URL(request.url).pathname, key };
      const outcome = await claimKey(deps.db, id, requestHash);
      if ("claim" in outcome) {
        const claim: Claim = outcome.claim;
        pending.set(request, (status, body) =>
          keeps(status)
            ? keepResponse(deps.db, claim, status, deps.secrets.encrypt(body))
            : releaseClaim(deps.db, claim),
        );
        return;
      }
      const { existing } = outcome;
      if (existing.requestHash !== requestHash)
        throw new AppError("UNPROCESSABLE", `${IDEMPOTENCY_HEADER} was already used with another request body`, [
          { field: IDEMPOTENCY_HEADER, message: "already used with another request body" },
        ]);
      if (existing.status === null || existing.response === null)
        throw new AppError(
          "CONFLICT",
          `a request with this ${IDEMPOTENCY_HEADER} is still being processed; retry later`,
        );
      return replay(existing.status, deps.secrets.decrypt(existing.response));
    })
    // an answer that did not pass the app's reply step (a handler returning its own Response) cannot be
    // kept: the key is given back, so that a retry runs again instead of meeting 409 for 24 h
    .onAfterResponse({ as: "global" }, async ({ request }) => {
      if (!pending.has(request)) return;
      log.warn("idempotency: an answer bypassed the reply step; its key was given back", {
        path: new URL(request.url).pathname,
      });
      await finishIdempotentRequest(request, 500, "");
    });
