import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { errorResponsesOf } from "./openapi-parts";
import { AgentTaskModel } from "../models/agent-tasks";
import { t } from "elysia";
import { Envelope, errorResponses } from "../models/common";
import { AppError } from "../errors";
import { ok } from "../models/envelope";
import * as tasks from "../services/agent-tasks";
import { ScenarioModel } from "../models/testing";
import { scenarioFromCall } from "../services/testing/scenario-from-call";
import { recordingObjectsOf } from "../storage/recording-objects";

export const agentTasksRoutes = (deps: Deps) => {
  const retentionDays = deps.config.recordingRetentionDays;
  const objects = recordingObjectsOf(deps.config);
  const urlTtlSeconds = deps.config.recordingStore.urlTtlSeconds;
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
        const recording = await tasks.getAgentTaskRecording(deps.db, access.scope, id, retentionDays);
        // a recording is personal data: no shared cache keeps it (nor the URL that reads it)
        const headers = { "cache-control": "private, no-store" };
        if (recording.audio)
          return new Response(recording.audio, { headers: { ...headers, "content-type": recording.contentType } });
        if (!objects)
          throw new AppError("UNAVAILABLE", "the recording is in object storage, and no S3 settings are configured");
        const location = objects.presign(recording.objectKey!, urlTtlSeconds);
        return new Response(null, { status: 302, headers: { ...headers, location } });
      },
      {
        response: errorResponses,
        detail: {
          tags: ["Agent tasks"],
          summary: "The call's recording (audio/wav), while the retention period keeps it",
          description:
            "200 with the audio when it is kept in Postgres; 302 to a presigned URL of the object (valid RECORDING_URL_TTL_SECONDS) when it is in object storage (RECORDING_STORE=s3).",
          responses: {
            200: { description: "the audio", content: { "audio/wav": {} } },
            302: {
              description: "the recording is in object storage: its presigned URL, in Location",
              headers: { Location: { schema: { type: "string", format: "uri" } } },
            },
            ...errorResponsesOf("401", "403", "404", "503"),
          },
        },
      },
    );
};
