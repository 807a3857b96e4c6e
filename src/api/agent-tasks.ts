import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { errorResponsesOf } from "./openapi-parts";
import { AgentTaskModel } from "../models/agent-tasks";
import { t } from "elysia";
import { Envelope, errorResponses } from "../models/common";
import { ok } from "../models/envelope";
import * as tasks from "../services/agent-tasks";
import { ScenarioModel } from "../models/testing";
import { scenarioFromCall } from "../services/testing/scenario-from-call";

export const agentTasksRoutes = (deps: Deps) => {
  const retentionDays = deps.config.recordingRetentionDays;
  return resourceRoutes({
    prefix: `${ORG_PREFIX}/agent-tasks`,
    access: organizationAccess(deps),
    tag: "Agent tasks",
    what: "agent task",
    idParam: "agentTaskId",
    sortable: ["id", "createdAt", "startedAt", "endedAt", "status"],
    notes: { list: "Calls (agent tasks); filter by status, assistantId, agentId, transport or creation time" },
    models: AgentTaskModel,
    service: {
      list: ({ scope }, _, query) => tasks.listAgentTasks(deps.db, scope, query),
      get: async ({ scope }, params, id) => {
        const task = await tasks.getAgentTaskDetail(deps.db, scope, id, retentionDays);
        const path = `/api/v1/vendors/${params.vendorId}/organizations/${params.organizationId}/agent-tasks/${id}/recording`;
        return { ...task, recording: task.recording && { ...task.recording, path } };
      },
    },
  })
    .post(
      "/:agentTaskId/hangup",
      async ({ access, params }) =>
        ok(await tasks.hangupAgentTask(deps.db, access.scope, assertUuid(params.agentTaskId, "agent task"))),
      {
        params: t.Object({ vendorId: t.String(), organizationId: t.String(), agentTaskId: t.String() }),
        response: { 200: Envelope(AgentTaskModel.out), ...errorResponses },
        detail: {
          tags: ["Agent tasks"],
          summary: "Hang up a running call (CANCEL while an outbound call rings)",
          description: "200 with the task (ended, unless its bridge takes longer than 2 s); 409 when it already ended.",
        },
      },
    )
    .post(
      "/:agentTaskId/to-scenario",
      async ({ access, params, status }) => {
        const id = assertUuid(params.agentTaskId, "agent task");
        return status(201, ok(await scenarioFromCall(deps.db, access.scope, id, retentionDays)));
      },
      {
        params: t.Object({ vendorId: t.String(), organizationId: t.String(), agentTaskId: t.String() }),
        response: { 201: Envelope(ScenarioModel.out), ...errorResponses },
        detail: {
          tags: ["Agent tasks"],
          summary: "Turn a finished call into a scripted test scenario",
          description:
            "201 with the scenario: the caller's utterances as turns, the call's tool calls and results as mocks, and one criterion that the call ends the same way. 409 while the call runs, or when its messages are no longer kept.",
        },
      },
    )
    .get(
      "/:agentTaskId/recording",
      async ({ access, params }) => {
        const id = assertUuid(params.agentTaskId, "agent task");
        const { contentType, audio } = await tasks.getAgentTaskRecording(deps.db, access.scope, id, retentionDays);
        // a recording is personal data: no shared cache keeps it
        return new Response(audio, { headers: { "content-type": contentType, "cache-control": "private, no-store" } });
      },
      {
        response: errorResponses,
        detail: {
          tags: ["Agent tasks"],
          summary: "The call's recording (audio/wav), while the retention period keeps it",
          responses: {
            200: { description: "the audio", content: { "audio/wav": {} } },
            ...errorResponsesOf("401", "403", "404"),
          },
        },
      },
    );
};
