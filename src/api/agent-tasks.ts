import { Elysia, t } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationScoped } from "./access";
import { Envelope, PagedEnvelope, errorResponses } from "../models/common";
import { AgentTaskModel } from "../models/agent-tasks";
import { ok, paged } from "../models/envelope";
import * as tasks from "../services/agent-tasks";

const tags = ["Agent tasks"];

export const agentTasksRoutes = (deps: Deps) =>
  new Elysia({ prefix: `${ORG_PREFIX}/agent-tasks` })
    .use(organizationScoped(deps))
    .get("", async ({ scope, query }) => paged(await tasks.listAgentTasks(deps.db, scope, query)), {
      query: AgentTaskModel.query,
      response: { 200: PagedEnvelope(AgentTaskModel.out), ...errorResponses },
      detail: { tags, summary: "List calls (agent tasks); filter by status, assistantId or agentId" },
    })
    .get("/:agentTaskId", async ({ scope, params }) => ok(await tasks.getAgentTask(deps.db, scope, assertUuid(params.agentTaskId, "agent task"))), {
      params: t.Object({ vendorId: t.String(), organizationId: t.String(), agentTaskId: t.String() }),
      response: { 200: Envelope(AgentTaskModel.out), ...errorResponses },
      detail: { tags, summary: "Read an agent task" },
    });
