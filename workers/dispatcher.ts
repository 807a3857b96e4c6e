// Hands outbox rows to Temporal. Woken by NOTIFY on commit and by a periodic sweep, so a row written
// while Temporal (or this process) was down is started once both are up again.
import { WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from "@temporalio/client";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Config } from "../src/config";
import type { Db } from "../src/db/client";
import { hookDeliveries } from "../src/db/schema";
import { HOOK_DELIVERIES_CHANNEL } from "../src/events/emit-call-event";
import { coalescingRunner } from "../src/lib/coalescing-runner";
import { log } from "../src/log";
import type { HookDeliveryInput } from "../workflows/hook-delivery";
import { HOOK_DELIVERY_WORKFLOW, hookDeliveryWorkflowId } from "../workflows/ids";
import { hookCallId, hookEventType, hookId, hookOrganizationId, hookStatus } from "../workflows/search-attributes";

const BATCH = 200;
const PARALLEL_STARTS = 32;

export type DispatcherDeps = { db: Db; sql: Sql; config: Pick<Config, "temporal" | "hooks">; sweepIntervalMs?: number };
/** A client on the worker's own connection (eager start needs it), and whether search attributes exist. */
export type DispatchTarget = { client: Client; searchAttributes: boolean };
type PendingRow = Pick<
  typeof hookDeliveries.$inferSelect,
  "id" | "run" | "callId" | "eventType" | "hookKey" | "organizationId"
>;

export async function startDispatcher(deps: DispatcherDeps) {
  let temporal: DispatchTarget | null = null;
  let stopped = false;
  let downSince: number | null = null;

  // Rows wait while the worker has no Temporal connection: nothing could run them anyway.
  const connect = (): DispatchTarget => {
    if (!temporal) throw new Error("the worker is not connected to Temporal");
    return temporal;
  };

  const start = async (t: DispatchTarget, row: PendingRow) => {
    const input: HookDeliveryInput = {
      deliveryId: row.id,
      run: row.run,
      backoffBaseMs: deps.config.hooks.backoffBaseMs,
      attemptTimeoutMs: deps.config.hooks.timeoutMs,
      searchAttributes: t.searchAttributes,
    };
    try {
      await t.client.workflow.start(HOOK_DELIVERY_WORKFLOW, {
        taskQueue: deps.config.temporal.taskQueue,
        workflowId: hookDeliveryWorkflowId(row.id, row.run),
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        // the first workflow task comes back in the start response and runs on this process's worker,
        // skipping the task queue: under a burst that queue, not the HTTP, is what makes hooks late
        requestEagerStart: true,
        memo: { deliveryId: row.id, callId: row.callId, eventType: row.eventType, hookId: row.hookKey, organizationId: row.organizationId },
        typedSearchAttributes: t.searchAttributes
          ? [
              { key: hookCallId, value: row.callId },
              { key: hookEventType, value: row.eventType },
              { key: hookId, value: row.hookKey },
              { key: hookOrganizationId, value: row.organizationId },
              { key: hookStatus, value: "PENDING" },
            ]
          : undefined,
      });
    } catch (err) {
      // this run was started before (and has finished): it is dispatched, never started twice
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  };

  /** Marks the runs Temporal accepted, in one statement for the whole batch. */
  const markDispatched = async (rows: PendingRow[]) => {
    if (rows.length === 0) return;
    // the run is part of the key: a manual retry may have started run + 1 since the rows were read
    const runs = sql.join(
      rows.map((r) => sql`(${r.id}::uuid, ${r.run}::int)`),
      sql`, `,
    );
    await deps.db
      .update(hookDeliveries)
      .set({ dispatchedAt: sql`now()` })
      .where(and(sql`(${hookDeliveries.id}, ${hookDeliveries.run}) in (${runs})`, isNull(hookDeliveries.dispatchedAt)));
  };

  const sweepOnce = async (): Promise<number> => {
    const rows = await deps.db
      .select({
        id: hookDeliveries.id,
        run: hookDeliveries.run,
        callId: hookDeliveries.callId,
        eventType: hookDeliveries.eventType,
        hookKey: hookDeliveries.hookKey,
        organizationId: hookDeliveries.organizationId,
      })
      .from(hookDeliveries)
      .where(and(isNull(hookDeliveries.dispatchedAt), eq(hookDeliveries.status, "PENDING")))
      .orderBy(asc(hookDeliveries.createdAt))
      .limit(BATCH);
    if (rows.length === 0) return 0;
    const t = connect();
    let next = 0;
    const started: PendingRow[] = [];
    const lane = async () => {
      // one failure stops the lane: when Temporal is down the remaining rows simply wait for the next sweep
      for (let row = rows[next++]; row && !stopped; row = rows[next++]) {
        await start(t, row);
        started.push(row);
      }
    };
    const lanes = await Promise.allSettled(Array.from({ length: Math.min(PARALLEL_STARTS, rows.length) }, lane));
    await markDispatched(started);
    const failed = lanes.find((l): l is PromiseRejectedResult => l.status === "rejected");
    if (failed) throw failed.reason;
    return rows.length;
  };

  const runner = coalescingRunner(
    async () => {
      while (!stopped && (await sweepOnce()) === BATCH);
      if (downSince !== null) log.info("dispatcher reached temporal again", { downMs: Date.now() - downSince });
      downSince = null;
    },
    (err) => {
      if (downSince !== null) return;
      downSince = Date.now();
      log.warn("dispatcher cannot hand deliveries to temporal, will retry", { error: (err as Error).message });
    },
  );
  const kick = () => runner.request();

  const listener = await deps.sql.listen(HOOK_DELIVERIES_CHANNEL, kick, kick);
  const timer = setInterval(kick, deps.sweepIntervalMs ?? 1_000);
  log.info("dispatcher started", { taskQueue: deps.config.temporal.taskQueue });

  return {
    /** Called by the worker loop when it has (or has lost) its Temporal connection. */
    attach(target: DispatchTarget | null) {
      temporal = target;
      if (target) kick();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await listener.unlisten().catch(() => {});
      await runner.stop();
    },
  };
}
