// Assistants and agents share shapes and rules, so one controller serves both paths.
import type { Deps } from "./deps";
import { ORG_PREFIX, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import type { AssistantKind } from "../db/schema";
import { PageQuery } from "../models/common";
import { AssistantModel } from "../models/assistants";
import * as service from "../services/assistants";

const assistantRoutes = (deps: Deps, kind: AssistantKind, path: string, tag: string) =>
  resourceRoutes({
    prefix: `${ORG_PREFIX}/${path}`,
    access: organizationAccess(deps),
    tag,
    what: kind,
    idParam: `${kind}Id`,
    sortable: ["id", "name", "createdAt", "updatedAt"],
    notes: {
      update:
        "Takes the full object: a field left out is cleared. extensions and callEventHooks replace the stored lists: an element with its id updates it, one without id is created, a stored one left out is removed.",
    },
    models: { ...AssistantModel, query: PageQuery, updateAnswersNull: true },
    service: {
      list: ({ scope }, _, query) => service.listAssistants(deps.db, scope, kind, query),
      get: ({ scope }, _, id) => service.getAssistant(deps.db, scope, kind, id),
      create: ({ scope }, _, body) => service.createAssistant(deps.db, deps.secrets, scope, kind, body, deps.guard),
      update: async ({ scope }, _, id, body) => {
        await service.updateAssistant(deps.db, deps.secrets, scope, kind, id, body, deps.guard);
        return null;
      },
      remove: ({ scope }, _, id) => service.deleteAssistant(deps.db, scope, kind, id),
    },
  });

export const assistantsRoutes = (deps: Deps) => assistantRoutes(deps, "assistant", "assistants", "Assistants");
export const agentsRoutes = (deps: Deps) => assistantRoutes(deps, "agent", "agents", "Agents");
