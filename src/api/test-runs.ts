// Test runs: created (202, the worker runs them), read, canceled; their results and JUnit.
import { t } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { errorResponsesOf } from "./openapi-parts";
import { Envelope, PageQuery, PagedEnvelope, errorResponses, sortableBy } from "../models/common";
import { ok, paged } from "../models/envelope";
import { ResultOut, RunModel } from "../models/testing";
import { createRun } from "../services/testing/create-run";
import * as runs from "../services/testing/runs";

const TAG = "Testing assistants";
const RunParams = t.Object({ vendorId: t.String(), organizationId: t.String(), testRunId: t.String() });
const runOf = (params: Record<string, string>) => assertUuid(params.testRunId, runs.RUN);

export const testRunsRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: `${ORG_PREFIX}/test-runs`,
    access: organizationAccess(deps),
    tag: TAG,
    what: runs.RUN,
    idParam: "testRunId",
    sortable: ["id", "createdAt", "status"],
    models: { out: RunModel.out, query: PageQuery },
    service: {
      list: ({ scope }, _, query) => runs.listRuns(deps.db, scope, query),
      get: ({ scope }, _, id) => runs.getRun(deps.db, scope, id),
    },
  })
    .post("", async ({ access, body, status }) => status(202, ok(await createRun(deps.db, access.scope, body))), {
      params: t.Object({ vendorId: t.String(), organizationId: t.String() }),
      body: RunModel.create,
      response: { 202: Envelope(RunModel.out), ...errorResponses },
      detail: {
        tags: [TAG],
        summary: "Run scenarios against an assistant or agent (202: queued; poll the run or its results)",
        description:
          "Exactly one of assistantId and agentId, and exactly one of suiteId, scenarioIds and scenarios (inline, not stored). Mocks and criteria naming a tool the target does not have, and required criteria the modality cannot measure, are a 400 naming the field.",
      },
    })
    .post(
      "/:testRunId/cancel",
      async ({ access, params }) => ok(await runs.cancelRun(deps.db, access.scope, runOf(params))),
      {
        params: RunParams,
        response: { 200: Envelope(RunModel.out), ...errorResponses },
        detail: {
          tags: [TAG],
          summary: "Cancel a run: pending results never start, running calls are hung up; the verdict stays null",
          description: "409 when the run has already completed.",
        },
      },
    )
    .get(
      "/:testRunId/results",
      async ({ access, params, query }) => paged(await runs.listResults(deps.db, access.scope, runOf(params), query)),
      {
        params: RunParams,
        query: sortableBy(PageQuery, ["position", "endedAt", "id"]),
        response: { 200: PagedEnvelope(ResultOut), ...errorResponses },
        detail: {
          tags: [TAG],
          summary: "The results that are in (sortable by position, endedAt; default scenario order, then iteration)",
        },
      },
    )
    .get(
      "/:testRunId/junit",
      async ({ access, params }) =>
        new Response(await runs.runJunit(deps.db, access.scope, runOf(params)), {
          headers: { "content-type": "application/xml; charset=utf-8" },
        }),
      {
        params: RunParams,
        response: errorResponses,
        detail: {
          tags: [TAG],
          summary: "The run's results as JUnit XML (a testcase per scenario and iteration)",
          responses: {
            200: { description: "JUnit XML", content: { "application/xml": { schema: { type: "string" } } } },
            ...errorResponsesOf("401", "403", "404"),
          },
        },
      },
    );
