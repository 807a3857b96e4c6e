// A call as the bridge has it when it ends, for the benches of call ends: its task open in the
// database and its finished WAV (`wav`'s bytes) in `dir`, ready for the conclusion writer.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bareConcludedEvent, type CallTask } from "../../src/calls/call-lifecycle";
import type { PendingEnd } from "../../src/calls/conclusion-spool";
import type { Db } from "../../src/db/client";
import { agentTasks } from "../../src/db/schema";

export async function openRecordedEnd(
  db: Db,
  owner: { organizationId: string; assistantId: string },
  dir: string,
  wav: Uint8Array,
  messages: PendingEnd["conclusion"]["event"]["messages"] = [],
): Promise<PendingEnd & { recording: NonNullable<PendingEnd["recording"]> }> {
  const task: CallTask = {
    callId: randomUUID(),
    ...owner,
    transport: { type: "websocket" },
    bridgeId: "bench",
    direction: "inbound",
    variables: {},
  };
  await db.insert(agentTasks).values({ ...task, status: "active" });
  const path = join(dir, `${task.callId}.wav`);
  writeFileSync(path, wav);
  return {
    task,
    startedAt: 1,
    conclusion: { status: "completed", error: null, event: { ...bareConcludedEvent(task, 1, "hangup"), messages } },
    recording: { path, contentType: "audio/wav", bytes: wav.length, truncated: false },
  };
}
