// Nothing is lost when the worker dies mid-backoff or when Temporal itself is down for a while (first
// attempts go on without it).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { inArray } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { hookDeliveries } from "../../src/db/schema";
import { connectTemporal } from "../../src/temporal/client";
import { hookDeliveryWorkflowId } from "../../workflows/ids";
import { failTimes, startReceiver, type Receiver } from "../helpers/receiver";
import { ensureTemporal, freePort, startDevServer, startWorker, type TestWorker } from "../helpers/temporal";
import {
  at,
  attemptsOf,
  callConcluded,
  createAssistantWithHooks,
  deliveryRow,
  emit,
  emitOne,
  openDb,
  waitForStatus,
} from "./fixtures";

const { db, close } = openDb();
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => {});
  await close();
}, 30_000);

async function receiverFor(responder: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(responder);
  cleanup.push(() => r.close());
  return r;
}

/** Runs `fn` with a worker of its own, stopped when `fn` ends (pass or fail): one dispatcher at a time. */
async function withWorker(options: Parameters<typeof startWorker>[0], fn: (worker: TestWorker) => Promise<void>) {
  const worker = await startWorker(options);
  try {
    await fn(worker);
  } finally {
    await worker.kill("SIGKILL");
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("worker crash", () => {
  let worker: TestWorker;
  beforeAll(async () => {
    const { address } = await ensureTemporal();
    worker = await startWorker({ address, backoffBaseMs: 1_000 });
  }, 60_000);
  // every worker's dispatcher serves the whole database: only one may run at a time in a test file
  afterAll(() => worker?.kill(), 30_000);

  test("a worker killed in the middle of a backoff is replaced and the delivery completes", async () => {
    const receiver = await receiverFor(failTimes(2));
    const a = await createAssistantWithHooks(db, [{ url: receiver.url }]);
    const id = await emitOne(db, {
      organizationId: a.organizationId,
      assistantId: a.assistantId,
      event: callConcluded(),
    });

    // attempt 2 failed and recorded: a 2 s wait has begun
    await until(async () => (await deliveryRow(db, id)).attemptCount === 2, 15_000, "attempt 2");
    await new Promise((r) => setTimeout(r, 300));
    await worker.kill("SIGKILL");
    expect(receiver.requests).toHaveLength(2);
    await worker.restart();

    const row = at(await waitForStatus(db, [id], ["SUCCEEDED"], 40_000));
    expect(row.attemptCount).toBe(3);
    expect((await attemptsOf(db, id)).map((x) => x.statusCode)).toEqual([500, 500, 200]);
    expect(receiver.requests).toHaveLength(3);
  }, 60_000);
});

describe("an attempt cut by a lost worker", () => {
  test("is sent again within seconds, not after the attempt time-out, with the same webhook-id", async () => {
    const { address } = await ensureTemporal();
    // a minute-long HTTP time-out and backoff: only a prompt re-run of the cut attempt delivers in time
    await withWorker({ address, backoffBaseMs: 60_000, timeoutMs: 60_000 }, async (lost) => {
      const receiver = await receiverFor((_req, i) => (i === 0 ? "hang" : { status: 200 }));
      const a = await createAssistantWithHooks(db, [
        { url: receiver.url, secret: `whsec_${btoa("a 32 byte key for the crash test")}` },
      ]);
      const id = await emitOne(db, {
        organizationId: a.organizationId,
        assistantId: a.assistantId,
        event: callConcluded(),
      });

      await receiver.waitForRequests(1, 15_000);
      await lost.kill("SIGKILL");
      await lost.restart();
      const row = at(await waitForStatus(db, [id], ["SUCCEEDED"], 40_000));
      expect(row.attemptCount).toBe(1);
      expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([id, id]);
      expect((await attemptsOf(db, id)).map((x) => x.statusCode)).toEqual([200]);
    });
  }, 120_000);
});

describe("SIGTERM", () => {
  test("the worker finishes the attempt in flight and exits cleanly, even when signalled twice", async () => {
    const { address } = await ensureTemporal();
    await withWorker({ address, backoffBaseMs: 1_000 }, async (stopping) => {
      const receiver = await receiverFor(() => ({ status: 200, delayMs: 1_000 }));
      const a = await createAssistantWithHooks(db, [{ url: receiver.url }]);
      const id = await emitOne(db, {
        organizationId: a.organizationId,
        assistantId: a.assistantId,
        event: callConcluded(),
      });

      await receiver.waitForRequests(1, 15_000);
      expect(await stopping.kill("SIGTERM", "SIGINT")).toBe(0);
      expect(stopping.stderr()).not.toContain("Error");
      expect(stopping.lines.filter((l) => l.level === "error")).toEqual([]);
      expect(stopping.lines.some((l) => l.msg === "worker stopped")).toBe(true);
      // recorded before the process ended: nothing was left for another worker to redo
      const row = await deliveryRow(db, id);
      expect(row.status).toBe("SUCCEEDED");
      expect((await attemptsOf(db, id)).map((x) => x.statusCode)).toEqual([200]);
      expect(receiver.requests).toHaveLength(1);
      // and its workflow task completed: no later worker re-runs the attempt
      const temporal = await connectTemporal({ temporal: { ...loadConfig().temporal, address } });
      try {
        const run = await temporal.client.workflow.getHandle(hookDeliveryWorkflowId(id, 1)).describe();
        expect(run.status.name).toBe("COMPLETED");
      } finally {
        await temporal.close();
      }
    });
  }, 60_000);
});

describe("a Temporal server that lost its workflows", () => {
  test("deliveries waiting in it are started again on a fresh server, their attempt count kept", async () => {
    const port = await freePort();
    let server = await startDevServer({ port });
    cleanup.push(() => server.stop());
    const options = { address: server.address, backoffBaseMs: 3_000, env: { HOOK_RECONCILE_INTERVAL_MS: "1000" } };
    await withWorker(options, async (worker) => {
      const receiver = await receiverFor((req) => {
        const seen = receiver.requests.filter((r) => r.body.equals(req.body)).length;
        return { status: seen === 1 ? 500 : 200 };
      });
      const a = await createAssistantWithHooks(db, [{ url: receiver.url }]);
      const ids = await Promise.all(
        Array.from({ length: 3 }, () =>
          emitOne(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() }),
        ),
      );
      // each has failed attempt 1 and waits 3 s for attempt 2 inside Temporal, which then forgets them all
      for (const id of ids) {
        const waiting = async () => {
          const row = await deliveryRow(db, id);
          return row.attemptCount === 1 && row.dispatchedAt !== null;
        };
        await until(waiting, 15_000, "attempt 1 and the workflow");
      }
      await server.stop();
      server = await startDevServer({ port });

      const rows = await waitForStatus(db, ids, ["SUCCEEDED"], 40_000);
      expect(rows.map((r) => r.attemptCount)).toEqual([2, 2, 2]);
      for (const id of ids) {
        expect((await attemptsOf(db, id)).map((x) => [x.attempt, x.statusCode])).toEqual([
          [1, 500],
          [2, 200],
        ]);
      }
      expect(receiver.requests).toHaveLength(6);
      // each of ours once (deliveries other test files left PENDING on other servers may be restarted too)
      const restarted = worker.lines.filter(
        (l) => l.msg === "hook delivery restarted" && ids.includes(l.deliveryId as string),
      );
      expect(restarted.map((l) => l.deliveryId).sort()).toEqual([...ids].sort());
    });
  }, 90_000);
});

describe("Temporal outage", () => {
  test("events emitted while Temporal is down are delivered at once, their workflows started once it is back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hooks-temporal-"));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const dbFilename = join(dir, "temporal.db");
    let server = await startDevServer({ port, dbFilename });
    cleanup.push(() => server.stop());
    const worker = await startWorker({ address: server.address, backoffBaseMs: 1_000 });
    cleanup.push(() => worker.kill());

    // one delivery is waiting out a backoff inside Temporal when it goes down
    const flaky = await receiverFor(failTimes(1));
    const a = await createAssistantWithHooks(db, [{ url: flaky.url }]);
    const waiting = await emitOne(db, {
      organizationId: a.organizationId,
      assistantId: a.assistantId,
      event: callConcluded(),
    });
    const inTemporal = async () => {
      const row = await deliveryRow(db, waiting);
      return row.attemptCount === 1 && row.dispatchedAt !== null;
    };
    await until(inTemporal, 15_000, "the first failed attempt and the workflow");
    await server.stop();

    const receiver = await receiverFor(() => ({ status: 200 }));
    const b = await createAssistantWithHooks(db, [{ url: receiver.url }]);
    const events = Array.from({ length: 5 }, () => callConcluded());
    const ids = (
      await Promise.all(
        events.map((event) => emit(db, { organizationId: b.organizationId, assistantId: b.assistantId, event })),
      )
    ).flatMap((r) => r.deliveryIds);
    expect(ids).toHaveLength(5);

    // attempt 1 needs Postgres and the receiver only; the workflows wait for Temporal
    await waitForStatus(db, ids, ["SUCCEEDED"], 20_000);
    const delivered = new Set(receiver.requests.map((r) => JSON.parse(r.body.toString()).callId));
    expect([...delivered].sort()).toEqual(events.map((e) => e.callId).sort());
    const unstarted = await db.select().from(hookDeliveries).where(inArray(hookDeliveries.id, ids));
    expect(unstarted.every((r) => r.dispatchedAt === null)).toBe(true);

    server = await startDevServer({ port, dbFilename });
    await waitForStatus(db, [waiting], ["SUCCEEDED"], 60_000);
    await until(
      async () => {
        const rows = await db.select().from(hookDeliveries).where(inArray(hookDeliveries.id, ids));
        return rows.every((r) => r.dispatchedAt !== null);
      },
      30_000,
      "the workflows of the deliveries made during the outage",
    );
    expect(receiver.requests).toHaveLength(5);
    expect(flaky.requests).toHaveLength(2);
  }, 90_000);
});
