import type { Deps } from "./deps";
import { crudRoutes } from "./crud";
import { StrategyModel } from "../models/strategies";
import * as strategies from "../services/strategies";

export const strategiesRoutes = (deps: Deps) =>
  crudRoutes(deps, {
    path: "/llm-generation-strategies",
    tag: "LLM generation strategies",
    what: "LLM generation strategy",
    idParam: "strategyId",
    sortable: "id, name, type, createdAt",
    models: StrategyModel,
    service: {
      list: ({ db, scope }, query) => strategies.listStrategies(db, scope, query),
      get: ({ db, scope }, id) => strategies.getStrategy(db, scope, id),
      create: ({ db, scope }, body) => strategies.createStrategy(db, scope, body),
      update: ({ db, scope }, id, body) => strategies.updateStrategy(db, scope, id, body),
      remove: ({ db, scope }, id) => strategies.deleteStrategy(db, scope, id),
    },
  });
