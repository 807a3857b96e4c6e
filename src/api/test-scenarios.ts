// Test scenarios and suites (docs/testing-assistants.md); runs come separately.
import type { Deps } from "./deps";
import { ORG_PREFIX, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { PageQuery } from "../models/common";
import { ScenarioModel, SuiteModel, criterionTypes } from "../models/testing";
import * as scenarios from "../services/testing/scenarios";
import * as suites from "../services/testing/suites";

const TAG = "Testing assistants";

export const testScenariosRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: `${ORG_PREFIX}/test-scenarios`,
    access: organizationAccess(deps),
    tag: TAG,
    what: scenarios.SCENARIO,
    idParam: "scenarioId",
    sortable: ["id", "name", "kind", "createdAt", "updatedAt"],
    notes: {
      list: `Scripted (turns) and simulated (persona, goal, facts) callers with tool mocks and criteria (${criterionTypes.join(", ")}).`,
    },
    models: { ...ScenarioModel, query: PageQuery },
    service: {
      list: ({ scope }, _, query) => scenarios.listScenarios(deps.db, scope, query),
      get: ({ scope }, _, id) => scenarios.getScenario(deps.db, scope, id),
      create: ({ scope }, _, body) => scenarios.createScenario(deps.db, scope, body),
      update: ({ scope }, _, id, body) => scenarios.updateScenario(deps.db, scope, id, body),
      remove: ({ scope }, _, id) => scenarios.deleteScenario(deps.db, scope, id),
    },
  });

export const testSuitesRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: `${ORG_PREFIX}/test-suites`,
    access: organizationAccess(deps),
    tag: TAG,
    what: suites.SUITE,
    idParam: "suiteId",
    sortable: ["id", "name", "createdAt", "updatedAt"],
    models: { ...SuiteModel, query: PageQuery },
    service: {
      list: ({ scope }, _, query) => suites.listSuites(deps.db, scope, query),
      get: ({ scope }, _, id) => suites.getSuite(deps.db, scope, id),
      create: ({ scope }, _, body) => suites.createSuite(deps.db, scope, body),
      update: ({ scope }, _, id, body) => suites.updateSuite(deps.db, scope, id, body),
      remove: ({ scope }, _, id) => suites.deleteSuite(deps.db, scope, id),
    },
  });
