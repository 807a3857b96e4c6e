// Who asks, and which tenant they act in. Resolved in the transform phase (see resource-routes.ts), before
// body validation, so a caller outside its tenant learns nothing about what a valid body looks like.
import type { Deps } from "./deps";
import { notFound } from "../errors";
import { isUuid } from "../lib/uuid";
import type { OrgScope, Principal } from "../services/auth";

/**
 * Who asks and what they may reach, from the request's Authorization header and path parameters (the one
 * header read: asking Elysia for `headers` copies them all into an object per request).
 */
export type Access<A> = (authorization: string | null, params: Record<string, string>) => Promise<A>;

/** A path id that is not a UUID names nothing: 404, like any absent resource. */
export function assertUuid(value: string | undefined, what: string): string {
  if (!isUuid(value)) throw notFound(what);
  return value;
}

/** Any valid token; the service decides what it may do (vendors, organizations, tokens). */
export const principalAccess =
  (deps: Deps): Access<Principal> =>
  (authorization) =>
    deps.tokens.resolve(authorization);

export type OrgAccess = { principal: Principal; scope: OrgScope };

/** For routes under P: the principal plus the organization it is allowed to act in. */
export const organizationAccess =
  (deps: Deps): Access<OrgAccess> =>
  async (authorization, params) => {
    const principal = await deps.tokens.resolve(authorization);
    const vendorId = assertUuid(params.vendorId, "vendor");
    const organizationId = assertUuid(params.organizationId, "organization");
    return { principal, scope: await deps.organizations.require(principal, vendorId, organizationId) };
  };

export const ORG_PREFIX = "/api/v1/vendors/:vendorId/organizations/:organizationId";
