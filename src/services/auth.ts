// Turns a bearer token into a principal. Token rows are cached briefly; a revocation in this process
// drops the entry at once and other instances hear of it through NOTIFY api_token_revoked.
import { and, eq, isNull } from "drizzle-orm";
import { apiTokens, organizations } from "../db/schema";
import type { Db, DbOrTx } from "../db/client";
import { hashToken, safeEqual } from "../crypto/tokens";
import { forbidden, notFound, unauthorized } from "../errors";

export type Principal =
  | { kind: "admin" }
  | { kind: "vendor"; tokenId: string; vendorId: string }
  | { kind: "organization"; tokenId: string; vendorId: string; organizationId: string };

const CACHE_TTL_MS = 30_000;

export function createTokenResolver(db: Db, adminToken: string | null) {
  const cache = new Map<string, { principal: Principal; expires: number }>();

  async function resolve(authorization: string | null | undefined): Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    if (!match) throw unauthorized();
    const token = match[1]!;
    if (adminToken && safeEqual(token, adminToken)) return { kind: "admin" };
    const hash = hashToken(token);
    const hit = cache.get(hash);
    if (hit && hit.expires > Date.now()) return hit.principal;
    const [row] = await db
      .select({ id: apiTokens.id, vendorId: apiTokens.vendorId, organizationId: apiTokens.organizationId })
      .from(apiTokens)
      .where(and(eq(apiTokens.tokenHash, hash), isNull(apiTokens.revokedAt)))
      .limit(1);
    if (!row) {
      cache.delete(hash);
      throw unauthorized();
    }
    const principal: Principal = row.organizationId
      ? { kind: "organization", tokenId: row.id, vendorId: row.vendorId, organizationId: row.organizationId }
      : { kind: "vendor", tokenId: row.id, vendorId: row.vendorId };
    cache.set(hash, { principal, expires: Date.now() + CACHE_TTL_MS });
    return principal;
  }

  function forget(tokenId: string) {
    for (const [hash, entry] of cache)
      if (entry.principal.kind !== "admin" && entry.principal.tokenId === tokenId) cache.delete(hash);
  }

  return { resolve, forget, clear: () => cache.clear() };
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

const ORG_CACHE_TTL_MS = 5_000;

/**
 * Access to P: 403 outside the token's reach, 404 when the organization is absent. Existing
 * organizations are remembered for a few seconds (every query under P is scoped by organization
 * anyway, so a just-deleted one can only yield 404s meanwhile).
 */
export function createOrganizationGate(db: DbOrTx) {
  const known = new Map<string, number>();
  async function require(principal: Principal, vendorId: string, organizationId: string): Promise<OrgScope> {
    requireReach(principal, vendorId, organizationId);
    const key = `${vendorId}/${organizationId}`;
    if ((known.get(key) ?? 0) > Date.now()) return { vendorId, organizationId };
    const [org] = await db
      .select({ id: organizations.id })
      .from(organizations)
      .where(and(eq(organizations.id, organizationId), eq(organizations.vendorId, vendorId)))
      .limit(1);
    if (!org) throw notFound("organization");
    known.set(key, Date.now() + ORG_CACHE_TTL_MS);
    return { vendorId, organizationId };
  }
  return { require, forget: (vendorId: string, organizationId: string) => known.delete(`${vendorId}/${organizationId}`) };
}

export type OrganizationGate = ReturnType<typeof createOrganizationGate>;

export type OrgScope = { vendorId: string; organizationId: string };
