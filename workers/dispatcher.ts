// Hands outbox rows to Temporal. Woken by NOTIFY on commit and by a periodic sweep, so a row written
// while Temporal (or this process) was down is started once both are up again.
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Config } from "../src/config";
import type { Db } from "../src/db/client";
import { hookDeliveries } from "../src/db/schema";
import { HOOK_DELIVERIES_CHANNEL } from "../src/events/emit-call-event";
import { coalescingRunner } from "../src/lib/coalescing-runner";
import { forEachLimited } from "../src/lib/for-each-limited";
import { describeError } from "../src/errors";
import { log } from "../src/log";
import { deliveryRunColumns, startDeliveryRun, type DeliveryRunRow, type DispatchTarget } from "./start-delivery-run";

const BATCH = 200;
const PARALLEL_STARTS = 32;

export type DispatcherDeps = { db: Db; sql: Sql; config: Pick<Config, "temporal" | "hooks">; sweepIntervalMs?: number };

export async function startDispatcher(deps: DispatcherDeps) {
  let temporal: DispatchTarget | null = null;
  let stopped = false;
  let downSince: number | null = null;

  // Rows wait while the worker has no Temporal connection: nothing could run them anyway.
  const connect = (): DispatchTarget => {
    if (!temporal) throw new Error("the worker is not connected to Temporal");
    return temporal;
  };

  /** Marks the runs Temporal accepted, in one statement for the whole batch. */
  const markDispatched = async (rows: DeliveryRunRow[]) => {
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
      .select(deliveryRunColumns)
      .from(hookDeliveries)
      .where(and(isNull(hookDeliveries.dispatchedAt), eq(hookDeliveries.status, "PENDING")))
      .orderBy(asc(hookDeliveries.createdAt))
      .limit(BATCH);
    if (rows.length === 0) return 0;
    const t = connect();
    const started: DeliveryRunRow[] = [];
    try {
      // when Temporal is down the rows not started simply wait for the next sweep
      await forEachLimited(
        rows,
        PARALLEL_STARTS,
        async (row) => {
          await startDeliveryRun(t, deps.config, row);
          started.push(row);
        },
        () => stopped,
      );
    } finally {
      await markDispatched(started);
    }
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
      log.warn("dispatcher cannot hand deliveries to temporal, will retry", { error: describeError(err) });
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
