// Starts again the PENDING deliveries whose workflow the Temporal server no longer knows (an in-memory
// dev server restarted, a cluster restored from an old backup): same delivery, same run and workflow
// id, the attempts already recorded kept. Runs whenever the worker (re)connects and on a schedule.
import { WorkflowNotFoundError } from "@temporalio/client";
import { and, asc, eq, gt, isNotNull } from "drizzle-orm";
import type { Config } from "../src/config";
import type { Db } from "../src/db/client";
import { hookDeliveries } from "../src/db/schema";
import { coalescingRunner } from "../src/lib/coalescing-runner";
import { forEachLimited } from "../src/lib/for-each-limited";
import { log } from "../src/log";
import { hookDeliveryWorkflowId } from "../workflows/ids";
import {
  deliveryRunColumns,
  startDeliveryRun,
  takeOver,
  type DeliveryRunRow,
  type DispatchTarget,
} from "./start-delivery-run";

const PAGE = 500;
const PARALLEL_CHECKS = 16;

export type ReconcilerDeps = { db: Db; config: Pick<Config, "temporal" | "hooks"> };

export function startReconciler(deps: ReconcilerDeps) {
  let target: DispatchTarget | null = null;

  const known = async (t: DispatchTarget, row: DeliveryRunRow) => {
    try {
      await t.client.workflow.getHandle(hookDeliveryWorkflowId(row.id, row.run)).describe();
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  };

  const reconcile = async () => {
    const t = target;
    if (!t) return;
    let restarted = 0;
    // keyset pages over the dispatched PENDING rows: the undispatched ones are the dispatcher's (one
    // whose attempt 1 may still be in flight is never started here)
    for (let after: string | null = null; ; ) {
      const rows = await deps.db
        .select({
          ...deliveryRunColumns,
          status: hookDeliveries.status,
          attemptCount: hookDeliveries.attemptCount,
          nextAttemptAt: hookDeliveries.nextAttemptAt,
        })
        .from(hookDeliveries)
        .where(
          and(
            eq(hookDeliveries.status, "PENDING"),
            isNotNull(hookDeliveries.dispatchedAt),
            after === null ? undefined : gt(hookDeliveries.id, after),
          ),
        )
        .orderBy(asc(hookDeliveries.id))
        .limit(PAGE);
      await forEachLimited(rows, PARALLEL_CHECKS, async (row) => {
        if (target !== t || (await known(t, row))) return;
        await startDeliveryRun(t, deps.config, row, takeOver(row));
        restarted++;
        log.info("hook delivery restarted", { deliveryId: row.id, run: row.run, nextAttempt: row.attemptCount + 1 });
      });
      const last = rows.at(-1);
      if (!last || rows.length < PAGE) break;
      after = last.id;
    }
    if (restarted > 0) log.warn("temporal had lost hook deliveries; restarted them", { restarted });
  };

  const runner = coalescingRunner(reconcile, (err) =>
    log.warn("hook delivery reconciler failed, will retry", { error: (err as Error).message }),
  );
  const timer = setInterval(() => runner.request(), deps.config.hooks.reconcileIntervalMs);

  return {
    /** Called by the worker loop with its Temporal connection: a new connection may mean a new server. */
    attach(next: DispatchTarget | null) {
      target = next;
      if (next) runner.request();
    },
    async stop() {
      clearInterval(timer);
      await runner.stop();
    },
  };
}
