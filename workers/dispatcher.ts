// Takes outbox rows to their receivers. It claims the runs whose workflow does not exist yet
// (claim-runs.ts), makes attempt 1 itself at once with the one attempt function the workflow runs too,
// then starts the run's workflow in the background with attempt 1's result in its input. A Temporal
// start costs the dev server ~4 ms of a 2-core machine (docs/hooks.md, "Why attempt 1 is made outside
// Temporal"): on the first attempt's path it made a burst wait seconds. Woken by a NOTIFY after the commit, by
// every finished attempt and by a periodic sweep, so a row written while this process (or Temporal) was
// down is taken up later.
import { and, isNull, sql } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Config } from "../src/config";
import type { Db } from "../src/db/client";
import { hookDeliveries } from "../src/db/schema";
import { describeError } from "../src/errors";
import { HOOK_DELIVERIES_CHANNEL } from "../src/events/wake-dispatchers";
import { coalescingRunner } from "../src/lib/coalescing-runner";
import { forEachLimited } from "../src/lib/for-each-limited";
import { inFlight } from "../src/lib/in-flight";
import { log } from "../src/log";
import { listenAlways } from "../src/db/listen";
import { untilDatabase } from "../src/db/until-available";
import { hookDeliveryWorkflowId } from "../workflows/ids";
import { backoffAfterAttempt } from "../workflows/schedule";
import type { AttemptInput, AttemptOutcome, LoadedDelivery } from "./activities/deliver-attempt";
import { runClaims, type ClaimedRun } from "./claim-runs";
import { acquireLease, type DispatcherLease } from "./dispatcher-lease";
import {
  startDeliveryRun,
  takeOver,
  type DeliveryRunRow,
  type DispatchTarget,
  type RunStart,
} from "./start-delivery-run";

/** first attempts under way at once; a finished one makes room for the next claim */
const ATTEMPTS_AT_ONCE = 64;
const PARALLEL_STARTS = 32;
const START_BATCH = 200;
/** starts are gathered this long (or until a batch is full), so they run beside few first attempts */
const START_GATHER_MS = 100;
/** starts also wait until nothing was claimed for this long (the end of a burst) */
const START_QUIET_MS = 100;
/**
 * Starts wait while first attempts are under way, the oldest at most this long: on 2 cores a start
 * costs the Temporal server several times what an attempt costs us, so a burst is sent first (20,000
 * at once: at 10 s the starts began 2.5 s before the last attempt and slowed it, bench/hooks). Below
 * the first retry's wait (1 minute), so a run's attempt 2 is never late for it.
 */
const START_MAX_WAIT_MS = 30_000;
/**
 * No claims while this many runs wait for their workflow (Temporal down, or a burst whose attempts
 * outrun the starts): the rest wait in Postgres. Above a 10,000-event burst, so that its first attempts
 * are not paced by the dev server's ~50 starts a second (docs/hooks.md); a held run is a few hundred
 * bytes, ~10 MB at the cap.
 */
const MAX_WAITING_STARTS = 20_000;
/** beyond the attempt's HTTP time-out: its record and a slow process */
const CLAIM_GRACE_MARGIN_MS = 30_000;
const LEASE_CHECK_MS = 1_000;
/** how long a stopping dispatcher tries to start the workflows of the attempts it made */
const STOP_STARTS_MS = 10_000;

export type DispatcherDeps = {
  db: Db;
  sql: Sql;
  config: Pick<Config, "temporal" | "hooks" | "databaseTimeoutMs">;
  /** the worker's attempt (workers/activities), the same the workflow runs as a local activity */
  deliverAttempt: (input: AttemptInput, loaded?: LoadedDelivery) => Promise<AttemptOutcome>;
  sweepIntervalMs?: number;
};

export async function startDispatcher(deps: DispatcherDeps) {
  let temporal: DispatchTarget | null = null;
  let stopped = false;
  let stopping: Promise<void> | null = null;
  let lease: DispatcherLease = await untilDatabase("dispatcher lease", () =>
    acquireLease(deps.sql, deps.config.databaseTimeoutMs),
  );
  let leaseCheckedAt = Date.now();
  const attempts = inFlight();
  let attemptsRunning = 0;
  /** the runs this dispatcher holds (attempt 1 under way or waiting for its workflow), by workflow id */
  const held = new Set<string>();
  const toStart = new Map<string, { row: DeliveryRunRow; from: RunStart; since: number }>();
  const graceMs = deps.config.hooks.timeoutMs + CLAIM_GRACE_MARGIN_MS;
  const claim = runClaims(deps.db);

  const currentLease = async () => {
    if (Date.now() - leaseCheckedAt < LEASE_CHECK_MS) return lease;
    if (!(await lease.held())) {
      // its claims are free for everyone now; an attempt of ours still under way may be sent twice
      log.warn("dispatcher lost its lease (database connection), taking a new one", { leaseKey: lease.key });
      await lease.release();
      lease = await acquireLease(deps.sql, deps.config.databaseTimeoutMs);
    }
    leaseCheckedAt = Date.now();
    return lease;
  };

  let gathering: ReturnType<typeof setTimeout> | null = null;
  const startSoon = () => {
    gathering ??= setTimeout(() => {
      gathering = null;
      starts.request();
    }, START_GATHER_MS);
  };
  const queueStart = (key: string, row: DeliveryRunRow, from: RunStart) => {
    // only what the start needs is held (not the target's headers and secret)
    const { id, run, callId, eventType, hookKey, organizationId } = row;
    toStart.set(key, { row: { id, run, callId, eventType, hookKey, organizationId }, from, since: Date.now() });
    if (toStart.size >= START_BATCH) starts.request();
    else startSoon();
  };

  const firstAttempt = (key: string, { payload, ...row }: ClaimedRun & { payload: string }) => {
    attemptsRunning++;
    void attempts.track(async () => {
      const nextDelayMs = backoffAfterAttempt(1, deps.config.hooks.backoffBaseMs);
      try {
        const input = { deliveryId: row.id, run: row.run, attempt: 1, nextDelayMs };
        const outcome = await deps.deliverAttempt(input, { row, payload });
        // GONE: the row was deleted with its organization; nothing is left to deliver
        if (outcome === "GONE") held.delete(key);
        else {
          const nextAttemptAt =
            outcome === "PENDING" && nextDelayMs !== null ? new Date(Date.now() + nextDelayMs) : null;
          queueStart(key, row, takeOver({ status: outcome, attemptCount: 1, nextAttemptAt }));
        }
      } catch (err) {
        // not recorded (the database failed): the workflow makes attempt 1 again, same webhook-id
        log.warn("hook attempt 1 not recorded; its workflow makes it again", {
          deliveryId: row.id,
          run: row.run,
          error: describeError(err),
        });
        queueStart(key, row, {});
      } finally {
        attemptsRunning--;
        claims.request();
        if (attemptsRunning === 0 && toStart.size > 0) startSoon();
      }
    });
  };

  /** the periodic sweep also takes over the runs of lost claimers; a NOTIFY or a finished attempt only new runs */
  let sweepDue = true;
  let lastClaimAt = 0;
  /** Claims as many runs as there is room for; true when there may be more. */
  const claimOnce = async (): Promise<boolean> => {
    const room = ATTEMPTS_AT_ONCE - attemptsRunning;
    if (stopped || room <= 0 || toStart.size >= MAX_WAITING_STARTS) return false;
    const leaseKey = (await currentLease()).key;
    const sweep = sweepDue;
    sweepDue = false;
    const rows = sweep ? await claim.runs(leaseKey, room, graceMs) : await claim.newRuns(leaseKey, room);
    if (rows.length > 0) lastClaimAt = Date.now();
    for (const row of rows) {
      const key = hookDeliveryWorkflowId(row.id, row.run);
      // one of ours, claimed again after the grace period while it waits for Temporal
      if (held.has(key)) continue;
      held.add(key);
      // attempt 1 still to make (its body came with the claim); a run taken over from a lost dispatcher
      // goes on from what it recorded
      if (row.payload !== null) firstAttempt(key, { ...row, payload: row.payload });
      else queueStart(key, row, takeOver(row));
    }
    return rows.length === room;
  };

  /** Marks the runs Temporal accepted, in one statement for the whole batch. */
  const markDispatched = async (rows: DeliveryRunRow[]) => {
    if (rows.length === 0) return;
    // the run is part of the key: a manual retry may have started run + 1 since the claim
    const runs = sql.join(
      rows.map((r) => sql`(${r.id}::uuid, ${r.run}::int)`),
      sql`, `,
    );
    await deps.db
      .update(hookDeliveries)
      .set({ dispatchedAt: sql`now()` })
      .where(and(sql`(${hookDeliveries.id}, ${hookDeliveries.run}) in (${runs})`, isNull(hookDeliveries.dispatchedAt)));
  };

  const startWaiting = async () => {
    for (let t = temporal; t && toStart.size > 0; t = temporal) {
      const oldest = toStart.values().next().value?.since ?? 0;
      // a burst still arriving may leave no attempt running for a moment: wait for it to go quiet too
      const busy = attemptsRunning > 0 || Date.now() - lastClaimAt < START_QUIET_MS;
      if (!stopped && busy && Date.now() - oldest < START_MAX_WAIT_MS) {
        startSoon();
        return;
      }
      const target = t;
      const batch = [...toStart].slice(0, START_BATCH);
      const started: DeliveryRunRow[] = [];
      try {
        // when Temporal is down the runs not started wait for the next sweep
        await forEachLimited(batch, PARALLEL_STARTS, async ([key, { row, from }]) => {
          await startDeliveryRun(target, deps.config, row, from);
          toStart.delete(key);
          held.delete(key);
          started.push(row);
        });
      } finally {
        await markDispatched(started);
      }
    }
  };

  let claimsFailing = false;
  const claims = coalescingRunner(
    async () => {
      while (await claimOnce());
      claimsFailing = false;
    },
    (err) => {
      if (claimsFailing) return;
      claimsFailing = true;
      log.warn("dispatcher cannot claim deliveries, will retry", { error: describeError(err) });
    },
  );
  let downSince: number | null = null;
  const starts = coalescingRunner(
    async () => {
      await startWaiting();
      if (downSince !== null && toStart.size === 0)
        log.info("dispatcher reached temporal again", { downMs: Date.now() - downSince });
      if (toStart.size === 0) downSince = null;
    },
    (err) => {
      if (downSince !== null) return;
      downSince = Date.now();
      log.warn("dispatcher cannot start delivery workflows, will retry", { error: describeError(err) });
    },
  );

  const kick = () => claims.request();
  const listener = listenAlways(deps.sql, HOOK_DELIVERIES_CHANNEL, kick, kick);
  const timer = setInterval(() => {
    sweepDue = true;
    claims.request();
    starts.request();
  }, deps.sweepIntervalMs ?? 1_000);
  log.info("dispatcher started", { taskQueue: deps.config.temporal.taskQueue, leaseKey: lease.key });

  const stop = async () => {
    stopped = true;
    clearInterval(timer);
    if (gathering) clearTimeout(gathering);
    await listener.unlisten();
    await claims.stop();
    await attempts.idle(deps.config.hooks.timeoutMs + 5_000);
    // the workflows of the attempts just made, while this process's worker still runs them (eager);
    // what Temporal does not take in time is taken over by another dispatcher once the lease ends
    starts.request();
    await Promise.race([starts.settled(), new Promise((r) => setTimeout(r, STOP_STARTS_MS))]);
    await lease.release();
  };

  return {
    /** Called by the worker loop when it has (or has lost) its Temporal connection. */
    attach(target: DispatchTarget | null) {
      temporal = target;
      if (target) starts.request();
    },
    /** Claims nothing more, lets the attempts under way end and starts their workflows (idempotent). */
    stop() {
      stopping ??= stop();
      return stopping;
    },
  };
}
