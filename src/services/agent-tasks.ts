// Agent tasks are written by the call bridge; the API reads them, with what a finished call left
// (messages, summary, recording) while the retention period keeps it, and asks a bridge to hang one up.
import { and, eq, gt, gte, isNull, lt, sql, type SQL } from "drizzle-orm";
import { CALL_HANGUP_CHANNEL, agentTasks, assistants, callRecordings, callRecords } from "../db/schema";
import { conflict } from "../errors";
import type { DbOrTx } from "../db/client";
import type { CallMessage } from "../events/payloads";
import type { AgentTaskQuery } from "../models/agent-tasks";
import type { OrgScope } from "./auth";
import { parsePaging, selectPage } from "./paging";
import { single } from "./rows";

const ownerOf = (kind: "assistant" | "agent") =>
  sql<string | null>`case when ${assistants.kind} = ${kind} then ${agentTasks.assistantId} end`;

const columns = {
  id: agentTasks.id,
  callId: agentTasks.callId,
  assistantId: ownerOf("assistant"),
  agentId: ownerOf("agent"),
  credentialId: agentTasks.credentialId,
  phoneNumberId: agentTasks.phoneNumberId,
  transport: agentTasks.transport,
  status: agentTasks.status,
  direction: agentTasks.direction,
  endedReason: agentTasks.endedReason,
  sipStatus: agentTasks.sipStatus,
  variables: agentTasks.variables,
  transferredTo: agentTasks.transferredTo,
  campaignId: agentTasks.campaignId,
  testRunId: agentTasks.testRunId,
  analysis: agentTasks.analysis,
  latency: agentTasks.latency,
  handoffs: agentTasks.handoffs,
  error: agentTasks.error,
  startedAt: agentTasks.startedAt,
  endedAt: agentTasks.endedAt,
  createdAt: agentTasks.createdAt,
};
const sortable = {
  id: agentTasks.id,
  createdAt: agentTasks.createdAt,
  startedAt: agentTasks.startedAt,
  endedAt: agentTasks.endedAt,
  status: agentTasks.status,
};

const select = (db: DbOrTx) =>
  db.select(columns).from(agentTasks).leftJoin(assistants, eq(assistants.id, agentTasks.assistantId));
const byId = (scope: OrgScope, id: string) =>
  and(eq(agentTasks.organizationId, scope.organizationId), eq(agentTasks.id, id));
/** Rows the cleanup has not reached yet but whose retention is over are already gone for readers. */
const kept = (createdAt: typeof callRecords.createdAt | typeof callRecordings.createdAt, retentionDays: number) =>
  gt(createdAt, sql`now() - make_interval(days => ${retentionDays})`);

export function getAgentTask(db: DbOrTx, scope: OrgScope, id: string) {
  return single(select(db).where(byId(scope, id)), "agent task");
}

// how long a hang-up waits for the bridge to close the task, so the answer usually shows it ended
const hangupWaitMs = 2000;

/**
 * Asks whichever bridge runs the call to end it (NOTIFY: every bridge listens; the one running or
 * dialling it ends it, CANCEL while it rings). 409 when it already ended. A bridge that died with
 * the call leaves it to the reaper.
 */
export async function hangupAgentTask(db: DbOrTx, scope: OrgScope, id: string) {
  const task = await getAgentTask(db, scope, id);
  if (task.status === "completed" || task.status === "failed") throw conflict("the call has already ended");
  await db.execute(sql`select pg_notify(${CALL_HANGUP_CHANNEL}, ${task.callId})`);
  const until = performance.now() + hangupWaitMs;
  while (performance.now() < until) {
    await Bun.sleep(50);
    const now = await getAgentTask(db, scope, id);
    if (now.status === "completed" || now.status === "failed") return now;
  }
  return getAgentTask(db, scope, id);
}

/** The task with its messages, summary and recording descriptor (null when absent or expired). */
export async function getAgentTaskDetail(db: DbOrTx, scope: OrgScope, id: string, retentionDays: number) {
  const { hasRecord, recordingType, recordingBytes, ...task } = await single(
    db
      .select({
        ...columns,
        hasRecord: sql<boolean>`${callRecords.callId} is not null`,
        messages: callRecords.messages,
        shortSummary: callRecords.shortSummary,
        summary: callRecords.summary,
        recordingType: callRecordings.contentType,
        recordingBytes: sql<
          number | null
        >`coalesce(octet_length(${callRecordings.audio}), ${callRecordings.objectBytes})`,
      })
      .from(agentTasks)
      .leftJoin(assistants, eq(assistants.id, agentTasks.assistantId))
      .leftJoin(callRecords, and(eq(callRecords.callId, agentTasks.callId), kept(callRecords.createdAt, retentionDays)))
      .leftJoin(
        callRecordings,
        and(eq(callRecordings.callId, agentTasks.callId), kept(callRecordings.createdAt, retentionDays)),
      )
      .where(byId(scope, id)),
    "agent task",
  );
  const recording = recordingType === null ? null : { contentType: recordingType, bytes: Number(recordingBytes) };
  // stored from the call_concluded payload (the column's type stays generic: the schema does not import events)
  return { ...task, messages: hasRecord ? (task.messages as CallMessage[]) : null, recording };
}

/**
 * The recording's content type and its bytes (kept in Postgres) or its object's key (in the bucket);
 * 404 when the task has none (or it expired).
 */
export async function getAgentTaskRecording(db: DbOrTx, scope: OrgScope, id: string, retentionDays: number) {
  return single(
    db
      .select({
        contentType: callRecordings.contentType,
        audio: callRecordings.audio,
        objectKey: callRecordings.objectKey,
      })
      .from(agentTasks)
      .innerJoin(callRecordings, eq(callRecordings.callId, agentTasks.callId))
      .where(and(byId(scope, id), kept(callRecordings.createdAt, retentionDays))),
    "recording",
  );
}

export function listAgentTasks(db: DbOrTx, scope: OrgScope, query: AgentTaskQuery) {
  const paging = parsePaging(query, sortable, "createdAt,asc");
  const filters: SQL[] = [eq(agentTasks.organizationId, scope.organizationId)];
  if (query.status) filters.push(eq(agentTasks.status, query.status));
  for (const id of [query.assistantId, query.agentId]) if (id) filters.push(eq(agentTasks.assistantId, id));
  if (query.transport) filters.push(sql`${agentTasks.transport}->>'type' = ${query.transport}`);
  if (query.direction) filters.push(eq(agentTasks.direction, query.direction));
  // test calls are listed only when asked for by their run
  filters.push(query.testRunId ? eq(agentTasks.testRunId, query.testRunId) : isNull(agentTasks.testRunId));
  // jsonb text of a boolean is exactly 'true' or 'false'; calls without an analysis match neither
  if (query.success) filters.push(sql`${agentTasks.analysis}->>'success' = ${query.success}`);
  if (query.createdAfter) filters.push(gte(agentTasks.createdAt, new Date(query.createdAfter)));
  if (query.createdBefore) filters.push(lt(agentTasks.createdAt, new Date(query.createdBefore)));
  const where = and(...filters);
  return selectPage(db, agentTasks, where, paging, (limit, offset, orderBy) =>
    select(db)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
}
