// A finished call turned into a scripted scenario (POST P/agent-tasks/{id}/to-scenario): the caller's
// utterances replayed, the tools answering as they did, and the call expected to end the same way.
import type { DbOrTx } from "../../db/client";
import type { EndedReason } from "../../db/schema";
import { conflict } from "../../errors";
import type { CallMessage } from "../../events/payloads";
import type { ScenarioInput } from "../../models/testing";
import { getAgentTaskDetail } from "../agent-tasks";
import type { OrgScope } from "../auth";
import { createScenario } from "./scenarios";

const MAX_TURNS = 50;
const MAX_MOCKS = 50;

export function scenarioFromMessages(name: string, messages: CallMessage[], endedReason: EndedReason): ScenarioInput {
  const turns = messages
    .filter((m) => m.type === "text" && m.role === "USER" && m.text.trim() !== "")
    .slice(0, MAX_TURNS)
    .map((m) => ({ say: (m as { text: string }).text.slice(0, 2000) }));
  const results = new Map<string, string>();
  for (const m of messages) if (m.type === "tool_result") results.set(m.callId, m.text);
  const toolMocks = messages
    .flatMap((m) => (m.type === "tool_call" ? [m] : []))
    .slice(0, MAX_MOCKS)
    .map((m) => ({ tool: m.toolName, arguments: m.parameters, output: results.get(m.callId) ?? "" }));
  return {
    name,
    kind: "scripted",
    turns,
    toolMocks,
    // criteria carry their type's own fields beside the base ones the schema types
    criteria: [{ name: "ends the same way", type: "endedReason", in: [endedReason] } as never],
  };
}

export async function scenarioFromCall(db: DbOrTx, scope: OrgScope, taskId: string, retentionDays: number) {
  const task = await getAgentTaskDetail(db, scope, taskId, retentionDays);
  if (task.status !== "completed" && task.status !== "failed") throw conflict("the call has not ended yet");
  if (task.messages === null) throw conflict("the call's messages are no longer kept (or it never connected)");
  if (task.endedReason === null) throw conflict("the call has no endedReason to expect");
  const input = scenarioFromMessages(`from call ${task.id}`, task.messages, task.endedReason);
  if (input.turns!.length === 0) throw conflict("the caller said nothing in this call: no turns to replay");
  return createScenario(db, scope, input);
}
