// Assistants and agents share shapes and rules, so one controller factory serves both paths.
import { Elysia, t } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationScoped } from "./access";
import { EmptyEnvelope, Envelope, PagedEnvelope, PageQuery, errorResponses } from "../models/common";
import { AssistantModel } from "../models/assistants";
import { done, ok, paged } from "../models/envelope";
import type { AssistantKind } from "../db/schema";
import * as service from "../services/assistants";


const assistantRoutes = (deps: Deps, kind: AssistantKind, path: string, tag: string) => {
  const idParam = `${kind}Id`;
  const IdParams = t.Object({ vendorId: t.String(), organizationId: t.String(), [idParam]: t.String() });
  const idOf = (params: Record<string, string>) => assertUuid(params[idParam], kind);
  return new Elysia({ prefix: `${ORG_PREFIX}/${path}` })
    .use(organizationScoped(deps))
    .get("", async ({ scope, query }) => paged(await service.listAssistants(deps.db, scope, kind, query)), {
      query: PageQuery,
      response: { 200: PagedEnvelope(AssistantModel.out), ...errorResponses },
      detail: { tags: [tag], summary: `List ${path} (sortable by id, name, createdAt, updatedAt)` },
    })
    .post(
      "",
      async ({ scope, body, status }) => status(201, ok(await service.createAssistant(deps.db, deps.secrets, scope, kind, body))),
      {
        body: AssistantModel.create,
        response: { 201: Envelope(AssistantModel.out), ...errorResponses },
        detail: { tags: [tag], summary: `Create an ${kind} (only name is required)` },
      },
    )
    .get(`/:${idParam}`, async ({ scope, params }) => ok(await service.getAssistant(deps.db, scope, kind, idOf(params))), {
      params: IdParams,
      response: { 200: Envelope(AssistantModel.out), ...errorResponses },
      detail: { tags: [tag], summary: `Read an ${kind}` },
    })
    .put(
      `/:${idParam}`,
      async ({ scope, params, body }) => {
        await service.updateAssistant(deps.db, deps.secrets, scope, kind, idOf(params), body);
        return done(`${kind} updated`);
      },
      {
        params: IdParams,
        body: AssistantModel.update,
        response: { 200: EmptyEnvelope, ...errorResponses },
        detail: {
          tags: [tag],
          summary: `Replace an ${kind}`,
          description:
            "Takes the full object: a field left out is cleared. extensions and callEventHooks replace the stored lists: an element with its id updates it, one without id is created, a stored one left out is removed.",
        },
      },
    )
    .delete(
      `/:${idParam}`,
      async ({ scope, params }) => {
        await service.deleteAssistant(deps.db, scope, kind, idOf(params));
        return done(`${kind} deleted`);
      },
      { params: IdParams, response: { 200: EmptyEnvelope, ...errorResponses }, detail: { tags: [tag], summary: `Delete an ${kind}` } },
    );
};

export const assistantsRoutes = (deps: Deps) => assistantRoutes(deps, "assistant", "assistants", "Assistants");
export const agentsRoutes = (deps: Deps) => assistantRoutes(deps, "agent", "agents", "Agents");
