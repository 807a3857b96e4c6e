import { Elysia, t } from "elysia";
import type { Deps } from "./deps";
import { assertUuid, authenticated } from "./access";
import { Envelope, EmptyEnvelope, PagedEnvelope, PageQuery, errorResponses } from "../models/common";
import { ApiTokenModel, OrganizationModel, VendorModel } from "../models/tenancy";
import { done, ok, paged } from "../models/envelope";
import { requireAdmin, requireVendor } from "../services/auth";
import * as tenancy from "../services/tenancy";

const VendorParams = t.Object({ vendorId: t.String() });
const OrgParams = t.Object({ vendorId: t.String(), organizationId: t.String() });
const TokenParams = t.Object({ vendorId: t.String(), tokenId: t.String() });

export const tenancyRoutes = (deps: Deps) =>
  new Elysia({ prefix: "/api/v1/vendors" })
    .use(authenticated(deps))
    .post(
      "",
      async ({ principal, body, status }) => {
        requireAdmin(principal);
        return status(201, ok(await tenancy.createVendor(deps.db, body)));
      },
      { body: VendorModel.create, response: { 201: Envelope(VendorModel.out), ...errorResponses }, detail: { tags: ["Vendors"], summary: "Create a vendor (admin token)" } },
    )
    .get(
      "",
      async ({ principal, query }) => {
        requireAdmin(principal);
        return paged(await tenancy.listVendors(deps.db, query));
      },
      { query: PageQuery, response: { 200: PagedEnvelope(VendorModel.out), ...errorResponses }, detail: { tags: ["Vendors"], summary: "List vendors (admin token)" } },
    )
    .get(
      "/:vendorId",
      async ({ principal, params }) => {
        const vendorId = assertUuid(params.vendorId, "vendor");
        requireVendor(principal, vendorId);
        return ok(await tenancy.getVendor(deps.db, vendorId));
      },
      { params: VendorParams, response: { 200: Envelope(VendorModel.out), ...errorResponses }, detail: { tags: ["Vendors"], summary: "Read a vendor" } },
    )
    .get(
      "/:vendorId/organizations",
      async ({ principal, params, query }) => {
        const vendorId = assertUuid(params.vendorId, "vendor");
        requireVendor(principal, vendorId);
        return paged(await tenancy.listOrganizations(deps.db, vendorId, query));
      },
      { params: VendorParams, query: PageQuery, response: { 200: PagedEnvelope(OrganizationModel.out), ...errorResponses }, detail: { tags: ["Organizations"], summary: "List organizations" } },
    )
    .post(
      "/:vendorId/organizations",
      async ({ principal, params, body, status }) => {
        const vendorId = assertUuid(params.vendorId, "vendor");
        requireVendor(principal, vendorId);
        return status(201, ok(await tenancy.createOrganization(deps.db, vendorId, body)));
      },
      { params: VendorParams, body: OrganizationModel.write, response: { 201: Envelope(OrganizationModel.out), ...errorResponses }, detail: { tags: ["Organizations"], summary: "Create an organization" } },
    )
    .get(
      "/:vendorId/organizations/:organizationId",
      async ({ principal, params }) => {
        const [vendorId, organizationId] = orgIds(params);
        requireOrgRead(principal, vendorId, organizationId);
        return ok(await tenancy.getOrganization(deps.db, vendorId, organizationId));
      },
      { params: OrgParams, response: { 200: Envelope(OrganizationModel.out), ...errorResponses }, detail: { tags: ["Organizations"], summary: "Read an organization" } },
    )
    .put(
      "/:vendorId/organizations/:organizationId",
      async ({ principal, params, body }) => {
        const [vendorId, organizationId] = orgIds(params);
        requireVendor(principal, vendorId);
        return ok(await tenancy.updateOrganization(deps.db, vendorId, organizationId, body));
      },
      { params: OrgParams, body: OrganizationModel.write, response: { 200: Envelope(OrganizationModel.out), ...errorResponses }, detail: { tags: ["Organizations"], summary: "Update an organization" } },
    )
    .delete(
      "/:vendorId/organizations/:organizationId",
      async ({ principal, params }) => {
        const [vendorId, organizationId] = orgIds(params);
        requireVendor(principal, vendorId);
        await tenancy.deleteOrganization(deps.db, vendorId, organizationId);
        deps.tokens.clear();
        deps.organizations.forget(vendorId, organizationId);
        return done("organization deleted");
      },
      { params: OrgParams, response: { 200: EmptyEnvelope, ...errorResponses }, detail: { tags: ["Organizations"], summary: "Delete an organization and everything in it" } },
    )
    .get(
      "/:vendorId/api-tokens",
      async ({ principal, params, query }) => {
        const vendorId = assertUuid(params.vendorId, "vendor");
        requireVendor(principal, vendorId);
        return paged(await tenancy.listApiTokens(deps.db, vendorId, query));
      },
      { params: VendorParams, query: PageQuery, response: { 200: PagedEnvelope(ApiTokenModel.out), ...errorResponses }, detail: { tags: ["API tokens"], summary: "List API tokens (never the token values)" } },
    )
    .post(
      "/:vendorId/api-tokens",
      async ({ principal, params, body, status }) => {
        const vendorId = assertUuid(params.vendorId, "vendor");
        requireVendor(principal, vendorId);
        return status(201, ok(await tenancy.createApiToken(deps.db, vendorId, body)));
      },
      { params: VendorParams, body: ApiTokenModel.create, response: { 201: Envelope(ApiTokenModel.created), ...errorResponses }, detail: { tags: ["API tokens"], summary: "Issue an API token for the vendor or one of its organizations" } },
    )
    .delete(
      "/:vendorId/api-tokens/:tokenId",
      async ({ principal, params }) => {
        const vendorId = assertUuid(params.vendorId, "vendor");
        requireVendor(principal, vendorId);
        const tokenId = assertUuid(params.tokenId, "api token");
        await tenancy.revokeApiToken(deps.db, vendorId, tokenId);
        deps.tokens.forget(tokenId);
        return done("token revoked");
      },
      { params: TokenParams, response: { 200: EmptyEnvelope, ...errorResponses }, detail: { tags: ["API tokens"], summary: "Revoke an API token" } },
    );

function orgIds(params: { vendorId: string; organizationId: string }): [string, string] {
  return [assertUuid(params.vendorId, "vendor"), assertUuid(params.organizationId, "organization")];
}

// An organization token may read its own organization record, nothing else at this level.
function requireOrgRead(principal: Parameters<typeof requireVendor>[0], vendorId: string, organizationId: string) {
  if (principal.kind === "organization" && principal.vendorId === vendorId && principal.organizationId === organizationId) return;
  requireVendor(principal, vendorId);
}
