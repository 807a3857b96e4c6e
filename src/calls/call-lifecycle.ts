// The agent task row of a call and its events: each change and the event it causes are written in one
// transaction (the events are an outbox), so a hook fires exactly when the change is committed.
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import {
  agentTasks,
  assistants,
  CAMPAIGN_CALL_ENDS_CHANNEL,
  testResults,
  type AgentTaskStatus,
  type CallDirection,
  type EndedReason,
  type Transport,
} from "../db/schema";
import { changeWithEvent, transactionWithEvents } from "../events/emit-call-event";
import type { CallConcludedPayload } from "../events/payloads";
import { log } from "../log";
import type { CallLatency } from "../models/call-latency";
import type { AgentTaskHandoff } from "../models/handoff";
import { storeConcludedCall, type Recording } from "./call-records";

export type CallTask = {
  callId: string;
  organizationId: string;
  assistantId: string;
  transport: Transport;
  bridgeId: string;
  direction: CallDirection;
  /** every variable the call's templates saw */
  variables: Record<string, string>;
  /** a test call's run and result (design.md, "How a test call runs"); absent for real calls */
  testRunId?: string | null;
  testResultId?: string;
};

const openStatuses: AgentTaskStatus[] = ["offered", "active"];

/** The socket was accepted: the call exists, run by this bridge instance. */
export async function openCallTask(db: Db, { testResultId, ...task }: CallTask) {
  if (!testResultId) return void (await db.insert(agentTasks).values({ ...task, status: "active" }));
  // a test call's result learns its call first: the events of the call find their result by it
  await db.transaction(async (tx) => {
    await tx.update(testResults).set({ callId: task.callId }).where(eq(testResults.id, testResultId));
    await tx.insert(agentTasks).values({ ...task, status: "active" });
  });
}

/** A call reserved before it was answered (SIP, under maxAgentTasks) is now answered. */
export async function activateCallTask(
  db: Db,
  callId: string,
  variables: Record<string, string>,
  sipStatus: number | null = null,
) {
  const rows = await db
    .update(agentTasks)
    .set({ status: "active", variables, ...(sipStatus !== null && { sipStatus }) })
    .where(and(eq(agentTasks.callId, callId), eq(agentTasks.status, "offered")))
    .returning({ id: agentTasks.id });
  // closed meanwhile, e.g. by a bridge that took the credential over from one it thought dead
  if (rows.length === 0) throw new Error("the call's reserved task is no longer open");
}

/**
 * Audio has begun: startedAt and call_started together, once (a retry after a commit whose answer was
 * lost, or a replay from the spool, writes nothing twice).
 */
export async function markCallStarted(db: Db, task: CallTask, startedAt: number) {
  // one statement, no transaction: the update and call_started's writes, which happen only if it marked
  await changeWithEvent(
    db,
    db
      .update(agentTasks)
      .set({ startedAt: new Date(startedAt) })
      .where(
        and(eq(agentTasks.callId, task.callId), isNull(agentTasks.startedAt), inArray(agentTasks.status, openStatuses)),
      )
      .returning({ id: agentTasks.id }),
    {
      organizationId: task.organizationId,
      assistantId: task.assistantId,
      testRunId: task.testRunId,
      event: {
        type: "call_started",
        callId: task.callId,
        startedAt,
        transport: task.transport,
        direction: task.direction,
      },
    },
  );
}

/** call_concluded with only what the task row knows; a call's own conclusion adds its history to it. */
export function bareConcludedEvent(
  task: Pick<CallTask, "callId" | "transport"> & {
    direction?: CallDirection;
    variables?: Record<string, string> | null;
  },
  startedAt: number | null,
  endedReason: EndedReason | null,
  endedAt = Date.now(),
): CallConcludedPayload {
  return {
    direction: task.direction ?? "inbound",
    endedReason,
    variables: task.variables ?? null,
    type: "call_concluded",
    callId: task.callId,
    startedAt,
    endedAt,
    shortSummary: null,
    summary: null,
    callRecording: null,
    transport: task.transport,
    messages: [],
  };
}

export type Conclusion = {
  status: Extract<AgentTaskStatus, "completed" | "failed">;
  error: string | null;
  /** the final SIP response of an outbound INVITE (the task's endedReason is the event's) */
  sipStatus?: number | null;
  /** without its recording when `recorded` is given */
  event: CallConcludedPayload;
  /** latency per turn, for the task (the event carries only its voice-to-voice summary) */
  latency?: CallLatency | null;
  /** the handoffs, as the task shows them (the event carries them in its own times) */
  handoffs?: AgentTaskHandoff[];
  /** the event serialized with its recording (built off the event loop), and the recording itself */
  recorded?: { body: string; recording: Recording };
};

/** Closes the task (once: a task already closed is left alone) and emits call_concluded. */
export async function concludeCallTask(
  db: Db,
  task: Pick<CallTask, "callId" | "organizationId" | "testRunId"> & { assistantId: string | null },
  conclusion: Conclusion,
) {
  const { status, error, event, recorded, sipStatus, latency, handoffs } = conclusion;
  return transactionWithEvents(db, async (tx, emit) => {
    // the assistant before the task, in the order a DELETE of the assistant takes them (its row, then
    // its tasks' by the set-null cascade): the other way round the outbox insert below waited on the
    // assistant while the DELETE waited on the task, and Postgres killed one of them as a deadlock
    if (task.assistantId)
      await tx.execute(sql`select 1 from ${assistants} where ${assistants.id} = ${task.assistantId} for key share`);
    const closed = await tx
      .update(agentTasks)
      .set({
        status,
        error,
        endedAt: event.endedAt === null ? new Date() : new Date(event.endedAt),
        endedReason: event.endedReason,
        ...(event.transferredTo && { transferredTo: event.transferredTo }),
        ...(event.analysis && { analysis: event.analysis }),
        ...(latency && { latency }),
        ...(handoffs?.length && { handoffs }),
        ...(sipStatus !== undefined && { sipStatus }),
      })
      .where(and(eq(agentTasks.callId, task.callId), inArray(agentTasks.status, openStatuses)))
      .returning({ id: agentTasks.id, campaignId: agentTasks.campaignId });
    if (closed.length > 0) await storeConcludedCall(tx, event, recorded?.recording ?? null);
    // the campaign's workflow dials the next contact on this (workers/campaign-call-ends.ts), not on its next poll
    const campaignId = closed[0]?.campaignId;
    if (campaignId) await tx.execute(sql`select pg_notify(${CAMPAIGN_CALL_ENDS_CHANNEL}, ${campaignId})`);
    // an assistant deleted since took its hooks with it
    if (closed.length > 0 && task.assistantId) {
      await emit({
        organizationId: task.organizationId,
        assistantId: task.assistantId,
        testRunId: task.testRunId,
        event,
        body: recorded?.body,
      });
    }
    return closed.length > 0;
  });
}

/**
 * The calls a bridge left open are failed and concluded: on start, those of this instance's previous
 * run; on a SIP takeover, those of a dead bridge on the credential taken over.
 */
export async function recoverOrphanedTasks(
  db: Db,
  bridgeId: string,
  scope: { credentialId?: string; error?: string } = {},
): Promise<number> {
  const orphans = await db
    .select()
    .from(agentTasks)
    .where(
      and(
        eq(agentTasks.bridgeId, bridgeId),
        inArray(agentTasks.status, openStatuses),
        scope.credentialId ? eq(agentTasks.credentialId, scope.credentialId) : undefined,
      ),
    );
  for (const task of orphans) {
    const event = bareConcludedEvent(task, task.startedAt?.getTime() ?? null, "bridge-lost");
    await concludeCallTask(db, task, { status: "failed", error: scope.error ?? "bridge restarted", event });
    log.info("call", { callId: task.callId, event: "recovered", bridgeId });
  }
  return orphans.length;
}
