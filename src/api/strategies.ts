import type { Deps } from "./deps";
import { ORG_PREFIX, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { PageQuery } from "../models/common";
import { StrategyModel } from "../models/strategies";
import * as strategies from "../services/strategies";

export const strategiesRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: `${ORG_PREFIX}/llm-generation-strategies`,
    access: organizationAccess(deps),
    tag: "LLM generation strategies",
    what: "LLM generation strategy",
    idParam: "strategyId",
    sortable: ["id", "name", "type", "createdAt"],
    models: { ...StrategyModel, query: PageQuery },
    service: {
      list: ({ scope }, _, query) => strategies.listStrategies(deps.db, scope, query),
      get: ({ scope }, _, id) => strategies.getStrategy(deps.db, scope, id),
      create: ({ scope }, _, body) => strategies.createStrategy(deps.db, scope, body),
      update: ({ scope }, _, id, body) => strategies.updateStrategy(deps.db, scope, id, body),
      remove: ({ scope }, _, id) => strategies.deleteStrategy(deps.db, scope, id),
    },
  });
