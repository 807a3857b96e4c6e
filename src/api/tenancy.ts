// Vendors, their organizations and their API tokens. Who may do what differs per operation (admin, vendor,
// the organization itself), so each service call first checks the principal.
import { Elysia } from "elysia";
import type { Deps } from "./deps";
import { assertUuid, principalAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { PageQuery } from "../models/common";
import { ApiTokenModel, OrganizationModel, VendorModel } from "../models/tenancy";
import { requireAdmin, requireVendor, type Principal } from "../services/auth";
import * as tenancy from "../services/tenancy";
import { recordingObjectsOf } from "../storage/recording-objects";

/** The path's vendor, once the principal may act for it. */
function vendorOf(principal: Principal, params: Record<string, string>): string {
  const vendorId = assertUuid(params.vendorId, "vendor");
  requireVendor(principal, vendorId);
  return vendorId;
}

// An organization token may read its own organization record, nothing else at this level.
function requireOrgRead(principal: Principal, vendorId: string, organizationId: string) {
  if (
    principal.kind === "organization" &&
    principal.vendorId === vendorId &&
    principal.organizationId === organizationId
  )
    return;
  requireVendor(principal, vendorId);
}

const vendorsRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: "/api/v1/vendors",
    access: principalAccess(deps),
    tag: "Vendors",
    what: "vendor",
    idParam: "vendorId",
    sortable: ["id", "name", "createdAt"],
    notes: { list: "With the admin token." },
    models: { ...VendorModel, query: PageQuery },
    service: {
      list: (principal, _, query) => {
        requireAdmin(principal);
        return tenancy.listVendors(deps.db, query);
      },
      create: (principal, _, body) => {
        requireAdmin(principal);
        return tenancy.createVendor(deps.db, body);
      },
      get: (principal, params) => tenancy.getVendor(deps.db, vendorOf(principal, params)),
    },
  });

const organizationsRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: "/api/v1/vendors/:vendorId/organizations",
    access: principalAccess(deps),
    tag: "Organizations",
    what: "organization",
    idParam: "organizationId",
    sortable: ["id", "name", "createdAt"],
    models: {
      create: OrganizationModel.write,
      update: OrganizationModel.write,
      out: OrganizationModel.out,
      query: PageQuery,
    },
    service: {
      list: (principal, params, query) => tenancy.listOrganizations(deps.db, vendorOf(principal, params), query),
      create: (principal, params, body) => tenancy.createOrganization(deps.db, vendorOf(principal, params), body),
      get: (principal, params, organizationId) => {
        const vendorId = assertUuid(params.vendorId, "vendor");
        requireOrgRead(principal, vendorId, organizationId);
        return tenancy.getOrganization(deps.db, vendorId, organizationId);
      },
      update: (principal, params, organizationId, body) =>
        tenancy.updateOrganization(deps.db, vendorOf(principal, params), organizationId, body),
      remove: async (principal, params, organizationId) => {
        const vendorId = vendorOf(principal, params);
        // its tokens and its kept scope die with it (the read model: src/services/auth.ts)
        await tenancy.deleteOrganization(deps.db, vendorId, organizationId, recordingObjectsOf(deps.config));
      },
    },
  });

const apiTokensRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: "/api/v1/vendors/:vendorId/api-tokens",
    access: principalAccess(deps),
    tag: "API tokens",
    what: "API token",
    idParam: "tokenId",
    sortable: ["id", "name", "createdAt"],
    notes: { list: "Never the token values." },
    models: { ...ApiTokenModel, query: PageQuery },
    service: {
      list: (principal, params, query) => tenancy.listApiTokens(deps.db, vendorOf(principal, params), query),
      create: (principal, params, body) => tenancy.createApiToken(deps.db, vendorOf(principal, params), body),
      remove: (principal, params, tokenId) => tenancy.revokeApiToken(deps.db, vendorOf(principal, params), tokenId),
    },
  });

export const tenancyRoutes = (deps: Deps) =>
  new Elysia().use(vendorsRoutes(deps)).use(organizationsRoutes(deps)).use(apiTokensRoutes(deps));
