// Turns a bearer token into a principal. Principals are kept in the read model (src/db/read-model.ts):
// a revocation (or its organization's deletion) is seen by every process, API instances and bridges,
// before its answer returns. Failed authentication is throttled per source address.
import { and, eq, isNull } from "drizzle-orm";
import { apiTokens, organizations } from "../db/schema";
import { readModelOf, type Db } from "../db/client";
import { readTags } from "../db/read-model";
import { hashToken, safeEqual } from "../crypto/tokens";
import { forbidden, notFound, tooManyRequests, unauthorized } from "../errors";
import { createRateLimiter } from "../lib/rate-limiter";

export type Principal =
  | { kind: "admin" }
  | { kind: "vendor"; tokenId: string; vendorId: string }
  | { kind: "organization"; tokenId: string; vendorId: string; organizationId: string };

/** this many failed authentications from one address within the window, and it waits for the window's end */
export const AUTH_FAILURE_LIMIT = 20;
const AUTH_FAILURE_WINDOW_MS = 60_000;
const MAX_TRACKED_SOURCES = 100_000;

const bearerToken = (authorization: string | null | undefined) => /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];

/** Requests per second each token may make (API_TOKEN_RATE; 0: unlimited), per process, bursts of `burst`. */
export type TokenRate = { perSecond: number; burst: number };

export function createTokenResolver(db: Db, adminToken: string | null, rate: TokenRate = { perSecond: 0, burst: 0 }) {
  const reads = readModelOf(db);
  const failures = createFailureCounter(AUTH_FAILURE_LIMIT, AUTH_FAILURE_WINDOW_MS);
  const throttle = rate.perSecond > 0 ? createRateLimiter(rate.perSecond, Math.max(1, rate.burst)) : null;

  /** 429 for a token past its rate (never the admin token: it bootstraps and repairs) */
  function throttled(principal: Principal): Principal {
    if (!throttle || principal.kind === "admin") return principal;
    const waitMs = throttle.take(principal.tokenId);
    if (waitMs === 0) return principal;
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    throw tooManyRequests(`this token is over its rate of ${rate.perSecond} requests per second`, seconds);
  }

  const key = (hash: string) => `principal:${hash}`;

  async function load(hash: string): Promise<Exclude<Principal, { kind: "admin" }> | null> {
    const [row] = await db
      .select({ id: apiTokens.id, vendorId: apiTokens.vendorId, organizationId: apiTokens.organizationId })
      .from(apiTokens)
      .where(and(eq(apiTokens.tokenHash, hash), isNull(apiTokens.revokedAt)))
      .limit(1);
    if (!row) return null;
    return row.organizationId
      ? { kind: "organization", tokenId: row.id, vendorId: row.vendorId, organizationId: row.organizationId }
      : { kind: "vendor", tokenId: row.id, vendorId: row.vendorId };
  }

  async function resolve(authorization: string | null | undefined): Promise<Principal> {
    const token = bearerToken(authorization);
    if (!token) throw unauthorized();
    if (adminToken && safeEqual(token, adminToken)) return { kind: "admin" };
    const hash = hashToken(token);
    const principal = await reads.read(
      key(hash),
      (p) =>
        p.kind === "organization"
          ? [readTags.token(p.tokenId), readTags.org(p.organizationId)]
          : [readTags.token(p.tokenId)],
      () => load(hash),
    );
    if (!principal) throw unauthorized();
    return throttled(principal);
  }

  /**
   * Before authenticating a request from `source`: 429 while that address is over its failure limit,
   * unless the token is one this process already knows valid (the admin token or a cached one), so
   * valid callers sharing the address are neither refused nor slowed. No database work while blocked.
   */
  function admit(sourceOf: () => string | null, authorization: string | null | undefined) {
    // the peer's address is looked up only once some address has failed (it was 2 % of a cached read's CPU)
    if (failures.none()) return;
    const source = sourceOf();
    if (source === null) return;
    const waitMs = failures.blockedFor(source);
    if (waitMs === 0) return;
    const token = bearerToken(authorization);
    if (token && ((adminToken && safeEqual(token, adminToken)) || reads.peek(key(hashToken(token))))) return;
    const seconds = Math.ceil(waitMs / 1000);
    throw tooManyRequests(`too many failed authentication attempts from this address; retry in ${seconds} s`, seconds);
  }

  /** A request from `source` failed authentication (401). */
  const failed = (source: string | null) => void (source !== null && failures.add(source));

  return { resolve, admit, failed };
}

/** Failures per key in fixed windows; a key at the limit is blocked until its window ends. */
function createFailureCounter(limit: number, windowMs: number) {
  const windows = new Map<string, { count: number; endsAt: number }>();
  return {
    add(key: string) {
      const now = Date.now();
      const current = windows.get(key);
      if (current && current.endsAt > now) current.count++;
      else windows.set(key, { count: 1, endsAt: now + windowMs });
      // bounded memory under many addresses: expired windows go first, then the oldest ones
      if (windows.size > MAX_TRACKED_SOURCES) {
        for (const [k, w] of windows) if (w.endsAt <= now) windows.delete(k);
        for (const k of windows.keys()) if (windows.size > MAX_TRACKED_SOURCES) windows.delete(k);
      }
    },
    none: () => windows.size === 0,
    /** milliseconds until `key` may try again; 0 when it may now */
    blockedFor(key: string) {
      const current = windows.get(key);
      const now = Date.now();
      return current && current.count >= limit && current.endsAt > now ? current.endsAt - now : 0;
    },
  };
}

export type TokenResolver = ReturnType<typeof createTokenResolver>;

export function requireAdmin(principal: Principal) {
  if (principal.kind !== "admin") throw forbidden("only the admin token may do this");
}

export function requireVendor(principal: Principal, vendorId: string) {
  if (principal.kind === "admin") return;
  if (principal.vendorId !== vendorId) throw forbidden();
  if (principal.kind === "organization") throw forbidden("an organization token cannot manage its vendor");
}

/** 403 when P = /vendors/{vendorId}/organizations/{organizationId} is outside the token's reach. */
export function requireReach(principal: Principal, vendorId: string, organizationId: string) {
  if (principal.kind === "admin") return;
  if (principal.vendorId !== vendorId) throw forbidden();
  if (principal.kind === "organization" && principal.organizationId !== organizationId) throw forbidden();
}

/**
 * Access to P: 403 outside the token's reach, 404 when the organization is absent. Existing
 * organizations are kept in the read model until deleted (deleteOrganization touches `org:<id>`).
 */
export function createOrganizationGate(db: Db) {
  const reads = readModelOf(db);
  async function require(principal: Principal, vendorId: string, organizationId: string): Promise<OrgScope> {
    requireReach(principal, vendorId, organizationId);
    const org = await reads.read(
      `organization:${vendorId}/${organizationId}`,
      () => [readTags.org(organizationId)],
      async () =>
        (
          await db
            .select({ id: organizations.id })
            .from(organizations)
            .where(and(eq(organizations.id, organizationId), eq(organizations.vendorId, vendorId)))
            .limit(1)
        )[0] ?? null,
    );
    if (!org) throw notFound("organization");
    return { vendorId, organizationId };
  }
  return { require };
}

export type OrganizationGate = ReturnType<typeof createOrganizationGate>;

export type OrgScope = { vendorId: string; organizationId: string };
