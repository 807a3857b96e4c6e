// P/campaigns (design.md, "Campaigns"): create (contacts as JSON or text/csv), read with counts, list,
// the contacts, and pause / resume / cancel. Each answers once Postgres has the change: the worker
// tells the campaign's workflow (services/campaign-changes.ts), so no answer waits on Temporal.
import { t } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationAccess } from "./access";
import { checkBody } from "./check-body";
import { resourceRoutes } from "./resource-routes";
import { CampaignCsvQuery, CampaignModel, ContactsQuery } from "../models/campaigns";
import { Envelope, PageQuery, PagedEnvelope, errorResponses, sortableBy } from "../models/common";
import { ok, paged } from "../models/envelope";
import { badRequest } from "../errors";
import { parseContactsCsv } from "../services/campaign-csv";
import * as campaigns from "../services/campaigns";
import type { OrgScope } from "../services/auth";

const TAG = "Campaigns";
const CampaignParams = t.Object({ vendorId: t.String(), organizationId: t.String(), campaignId: t.String() });
const idOf = (params: Record<string, string>) => assertUuid(params.campaignId, campaigns.CAMPAIGN);

const isCsvBody = (body: unknown): body is { text: string } =>
  typeof body === "object" && body !== null && (body as { contentType?: unknown }).contentType === "text/csv";
const fieldSchemas: Record<string, { type?: unknown }> = CampaignModel.create.properties;

/** A query value as the JSON body would carry it: a number only where the schema wants an integer. */
function queryValue(name: string, value: string): unknown {
  const type = fieldSchemas[name]?.type;
  // CampaignCsvQuery has checked that it is digits
  if (type === "integer") return Number(value);
  if (type !== "object") return value;
  try {
    return JSON.parse(value);
  } catch {
    throw badRequest(name, "must be JSON in the query of a text/csv body");
  }
}

/** The campaign as JSON, or built from a CSV body and the query's fields; 400 naming the field. */
function campaignInput(body: unknown, query: Record<string, string | undefined>) {
  if (!isCsvBody(body)) return checkBody(CampaignModel.create, body);
  const fields: Record<string, unknown> = { contacts: parseContactsCsv(body.text) };
  for (const [name, value] of Object.entries(query)) if (value !== undefined) fields[name] = queryValue(name, value);
  return checkBody(CampaignModel.create, fields);
}

export const campaignsRoutes = (deps: Deps) => {
  const act = (name: campaigns.CampaignAction) => async (scope: OrgScope, params: Record<string, string>) =>
    ok(await campaigns.changeCampaignStatus(deps.db, scope, idOf(params), name));
  const actionDoc = (summary: string) => ({
    params: CampaignParams,
    response: { 200: Envelope(CampaignModel.out), ...errorResponses },
    detail: { tags: [TAG], summary, description: "Pause and cancel stop new dials only: calls already placed go on." },
  });
  const [pause, resume, cancel] = campaigns.campaignActions.map(act);
  return resourceRoutes({
    prefix: `${ORG_PREFIX}/campaigns`,
    access: organizationAccess(deps),
    tag: TAG,
    what: campaigns.CAMPAIGN,
    idParam: "campaignId",
    sortable: ["id", "name", "createdAt", "status"],
    models: { out: CampaignModel.out, query: PageQuery },
    service: {
      list: ({ scope }, _, query) => campaigns.listCampaigns(deps.db, scope, query),
      get: ({ scope }, _, id) => campaigns.getCampaign(deps.db, scope, id),
    },
  })
    .post(
      "",
      async ({ access, body, query, status }) => {
        const input = campaignInput(body, query);
        const id = await campaigns.createCampaign(deps.db, deps.guard, access.scope, input);
        return status(201, ok(await campaigns.getCampaign(deps.db, access.scope, id)));
      },
      {
        query: CampaignCsvQuery,
        response: { 201: Envelope(CampaignModel.out), 413: errorResponses[400], ...errorResponses },
        detail: {
          tags: [TAG],
          summary: "Create a campaign (JSON, or text/csv contacts with the other fields in the query)",
          description:
            "A CSV has a header row with a `to` column; every other column is a variable. With text/csv, `schedule`, `retry` and `voicemail` are JSON in the query.",
          "x-text-bodies": true,
          requestBody: {
            required: true,
            content: {
              "application/json": { schema: CampaignModel.create as object },
              "text/csv": { schema: { type: "string" } },
            },
          },
        },
      },
    )
    .get(
      "/:campaignId/contacts",
      async ({ access, params, query }) =>
        paged(await campaigns.listContacts(deps.db, access.scope, idOf(params), query)),
      {
        params: CampaignParams,
        query: sortableBy(ContactsQuery, ["position", "status"]),
        response: { 200: PagedEnvelope(CampaignModel.contact), ...errorResponses },
        detail: { tags: [TAG], summary: "List a campaign's contacts (sortable by position, status)" },
      },
    )
    .post("/:campaignId/pause", ({ access, params }) => pause!(access.scope, params), actionDoc("Pause a campaign"))
    .post("/:campaignId/resume", ({ access, params }) => resume!(access.scope, params), actionDoc("Resume a campaign"))
    .post("/:campaignId/cancel", ({ access, params }) => cancel!(access.scope, params), actionDoc("Cancel a campaign"));
};
