// Authentication and tenant scope as Elysia plugins. They run in the transform phase, before body
// validation, so a caller outside its tenant learns nothing about what a valid body looks like.
import { Elysia } from "elysia";
import type { Deps } from "./deps";
import { notFound } from "../errors";
import { isUuid } from "../lib/uuid";

/** A path id that is not a UUID names nothing: 404, like any absent resource. */
export function assertUuid(value: string | undefined, what: string): string {
  if (!isUuid(value)) throw notFound(what);
  return value;
}

export const authenticated = (deps: Deps) =>
  new Elysia().derive({ as: "scoped" }, async ({ headers }) => ({
    principal: await deps.tokens.resolve(headers.authorization),
  }));

/** For routes under P: the principal plus the organization it is allowed to act in. */
export const organizationScoped = (deps: Deps) =>
  new Elysia().derive({ as: "scoped" }, async ({ headers, params }) => {
    const principal = await deps.tokens.resolve(headers.authorization);
    const p = params as Record<string, string | undefined>;
    const vendorId = assertUuid(p.vendorId, "vendor");
    const organizationId = assertUuid(p.organizationId, "organization");
    const scope = await deps.organizations.require(principal, vendorId, organizationId);
    return { principal, scope };
  });

export const ORG_PREFIX = "/api/v1/vendors/:vendorId/organizations/:organizationId";
