import { Elysia, t } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationScoped } from "./access";
import { Envelope, PagedEnvelope, errorResponses } from "../models/common";
import { AgentTaskModel } from "../models/agent-tasks";
import { ok, paged } from "../models/envelope";
import * as tasks from "../services/agent-tasks";

const tags = ["Agent tasks"];
const IdParams = t.Object({ vendorId: t.String(), organizationId: t.String(), agentTaskId: t.String() });
const idOf = (params: { agentTaskId: string }) => assertUuid(params.agentTaskId, "agent task");

export const agentTasksRoutes = (deps: Deps) => {
  const retentionDays = deps.config.recordingRetentionDays;
  return new Elysia({ prefix: `${ORG_PREFIX}/agent-tasks` })
    .use(organizationScoped(deps))
    .get("", async ({ scope, query }) => paged(await tasks.listAgentTasks(deps.db, scope, query)), {
      query: AgentTaskModel.query,
      response: { 200: PagedEnvelope(AgentTaskModel.out), ...errorResponses },
      detail: { tags, summary: "List calls (agent tasks); filter by status, assistantId, agentId, transport or creation time" },
    })
    // a read carries what the finished call left: messages, summary, the recording's descriptor
    .get("/:agentTaskId", async ({ scope, params }) => ok(await tasks.getAgentTaskDetail(deps.db, scope, idOf(params), retentionDays)), {
      params: IdParams,
      response: { 200: Envelope(AgentTaskModel.detail), ...errorResponses },
      detail: { tags, summary: "Read an agent task" },
    })
    .get(
      "/:agentTaskId/recording",
      async ({ scope, params }) => {
        const { contentType, audio } = await tasks.getAgentTaskRecording(deps.db, scope, idOf(params), retentionDays);
        return new Response(audio, { headers: { "content-type": contentType, "content-length": String(audio.length), "cache-control": "private, no-store" } });
      },
      {
        params: IdParams,
        detail: {
          tags,
          summary: "The call's recording",
          description: "audio/wav: both sides mixed, PCM16 mono at the call's rate. 404 when the call has none or it is past RECORDING_RETENTION_DAYS.",
          responses: { 200: { description: "the audio", content: { "audio/wav": { schema: { type: "string", format: "binary" } } } } },
        },
      },
    );
};
