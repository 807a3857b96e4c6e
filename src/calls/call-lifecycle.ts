// The agent task row of a call and its events: each change and the event it causes are written in one
// transaction (emitCallEvent is an outbox), so a hook fires exactly when the change is committed.
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { agentTasks, type AgentTaskStatus, type Transport } from "../db/schema";
import { emitCallEvent } from "../events/emit-call-event";
import type { CallConcludedPayload } from "../events/payloads";
import { log } from "../log";
import { storeConcludedCall } from "./call-records";

export type CallTask = { callId: string; organizationId: string; assistantId: string; transport: Transport; bridgeId: string };

const openStatuses: AgentTaskStatus[] = ["offered", "active"];

/** The socket was accepted: the call exists, run by this bridge instance. */
export async function openCallTask(db: Db, task: CallTask) {
  await db.insert(agentTasks).values({ ...task, status: "active" });
}

/** A call reserved before it was answered (SIP, under maxAgentTasks) is now answered. */
export async function activateCallTask(db: Db, callId: string) {
  const rows = await db
    .update(agentTasks)
    .set({ status: "active" })
    .where(and(eq(agentTasks.callId, callId), eq(agentTasks.status, "offered")))
    .returning({ id: agentTasks.id });
  // closed meanwhile, e.g. by a bridge that took the credential over from one it thought dead
  if (rows.length === 0) throw new Error("the call's reserved task is no longer open");
}

/** Audio has begun: startedAt and call_started together. */
export async function markCallStarted(db: Db, task: CallTask, startedAt: number) {
  await db.transaction(async (tx) => {
    await tx.update(agentTasks).set({ startedAt: new Date(startedAt) }).where(eq(agentTasks.callId, task.callId));
    await emitCallEvent(tx, {
      organizationId: task.organizationId,
      assistantId: task.assistantId,
      event: { type: "call_started", callId: task.callId, startedAt, transport: task.transport },
    });
  });
}

export type Conclusion = { status: Extract<AgentTaskStatus, "completed" | "failed">; error: string | null; event: CallConcludedPayload };

/** Closes the task (once: a task already closed is left alone) and emits call_concluded. */
export async function concludeCallTask(db: Db, task: Pick<CallTask, "callId" | "organizationId"> & { assistantId: string | null }, conclusion: Conclusion) {
  const { status, error, event } = conclusion;
  return db.transaction(async (tx) => {
    const closed = await tx
      .update(agentTasks)
      .set({ status, error, endedAt: event.endedAt === null ? new Date() : new Date(event.endedAt) })
      .where(and(eq(agentTasks.callId, task.callId), inArray(agentTasks.status, openStatuses)))
      .returning({ id: agentTasks.id });
    if (closed.length > 0) await storeConcludedCall(tx, event);
    // an assistant deleted since took its hooks with it
    if (closed.length > 0 && task.assistantId) await emitCallEvent(tx, { organizationId: task.organizationId, assistantId: task.assistantId, event });
    return closed.length > 0;
  });
}

/**
 * The calls a bridge left open are failed and concluded: on start, those of this instance's previous
 * run; on a SIP takeover, those of a dead bridge on the credential taken over.
 */
export async function recoverOrphanedTasks(db: Db, bridgeId: string, scope: { credentialId?: string; error?: string } = {}): Promise<number> {
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
    const endedAt = Date.now();
    await concludeCallTask(db, task, {
      status: "failed",
      error: scope.error ?? "bridge restarted",
      event: {
        type: "call_concluded",
        callId: task.callId,
        startedAt: task.startedAt?.getTime() ?? null,
        endedAt,
        shortSummary: null,
        summary: null,
        callRecording: null,
        transport: task.transport,
        messages: [],
      },
    });
    log.info("call", { callId: task.callId, event: "recovered", bridgeId });
  }
  return orphans.length;
}
