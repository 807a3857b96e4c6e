// Attempt 1 is made by the dispatcher before the run's workflow exists; the workflow then records the end
// or goes on with attempt 2. Several dispatchers share the outbox, and a lost one's claims are taken over.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { inArray, sql } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import type { Tx } from "../../src/db/client";
import { hookDeliveries } from "../../src/db/schema";
import { transactionWithEvents } from "../../src/events/emit-call-event";
import { connectTemporal } from "../../src/temporal/client";
import { createSecretBox } from "../../src/crypto/secrets";
import { createActivities } from "../../workers/activities";
import { startDispatcher } from "../../workers/dispatcher";
import { acquireLease } from "../../workers/dispatcher-lease";
import { hookDeliveryWorkflowId } from "../../workflows/ids";
import { failTimes, startReceiver, type Receiver } from "../helpers/receiver";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
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

const { db, client: pg, close } = openDb();
const secret = `whsec_${btoa("a 32 byte key for the first try!")}`;
let address: string;
let temporal: Awaited<ReturnType<typeof connectTemporal>>;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  ({ address } = await ensureTemporal());
  temporal = await connectTemporal({ temporal: { ...loadConfig().temporal, address } });
}, 60_000);
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => {});
  await temporal?.close();
  await close();
}, 30_000);

async function receiverFor(responder?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(responder);
  cleanup.push(() => r.close());
  return r;
}

/** The run's workflow once it exists: its result, search attributes and how many attempts it made itself. */
async function workflowOf(id: string) {
  // started in the background after attempt 1, then marked on the row
  await until(async () => (await deliveryRow(db, id)).dispatchedAt !== null, 15_000, "the workflow's start");
  const handle = temporal.client.workflow.getHandle(hookDeliveryWorkflowId(id, 1));
  const result = await handle.result();
  const { searchAttributes } = await handle.describe();
  const history = await handle.fetchHistory();
  const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes).length;
  return { result, hookStatus: searchAttributes.HookStatus, attemptsInWorkflow: markers };
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** One call_concluded for a new assistant whose one hook is `url`: its delivery id. */
async function emitTo(url: string, hookSecret: string | undefined = secret) {
  const a = await createAssistantWithHooks(db, [{ url, secret: hookSecret }]);
  return emitOne(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() });
}

/** Emits one event and, in the same transaction, leaves its run as a dispatcher would have left it. */
async function emitAs(url: string, state: (tx: Tx, id: string) => Promise<unknown>) {
  const a = await createAssistantWithHooks(db, [{ url, secret }]);
  return transactionWithEvents(db, async (tx, emit) => {
    const { deliveryIds } = await emit({
      organizationId: a.organizationId,
      assistantId: a.assistantId,
      event: callConcluded(),
    });
    const id = at(deliveryIds);
    await state(tx, id);
    return id;
  });
}

describe("one dispatcher", () => {
  let worker: TestWorker;
  beforeAll(async () => {
    worker = await startWorker({ address, backoffBaseMs: 300 });
  }, 60_000);
  afterAll(() => worker?.kill(), 30_000);

  test("attempt 1 reaches the receiver before the workflow, which then only records SUCCEEDED", async () => {
    const receiver = await receiverFor();
    const id = await emitTo(receiver.url);

    const row = at(await waitForStatus(db, [id], ["SUCCEEDED"], 20_000));
    expect(row.attemptCount).toBe(1);
    expect(row.claimedAt).not.toBeNull();
    expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([id]);
    expect(await workflowOf(id)).toEqual({
      result: { status: "SUCCEEDED", attempts: 1 },
      hookStatus: ["SUCCEEDED"],
      attemptsInWorkflow: 0,
    });
  }, 30_000);

  test("a failed attempt 1 goes on in the workflow with attempt 2, the same webhook-id and the count kept", async () => {
    const receiver = await receiverFor(failTimes(1, 503));
    const id = await emitTo(receiver.url);

    const row = at(await waitForStatus(db, [id], ["SUCCEEDED"], 20_000));
    expect(row.attemptCount).toBe(2);
    expect((await attemptsOf(db, id)).map((x) => [x.attempt, x.statusCode])).toEqual([
      [1, 503],
      [2, 200],
    ]);
    expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([id, id]);
    expect(await workflowOf(id)).toEqual({
      result: { status: "SUCCEEDED", attempts: 2 },
      hookStatus: ["SUCCEEDED"],
      attemptsInWorkflow: 1,
    });
  }, 30_000);

  test("a destination refused at attempt 1 gets a workflow that records FAILED", async () => {
    // outside OUTBOUND_ALLOW_CIDRS (loopback only in the tests): refused before any connection
    const id = await emitTo("http://10.255.255.1/hook", undefined);
    const row = at(await waitForStatus(db, [id], ["FAILED"], 20_000));
    expect(row.attemptCount).toBe(1);
    expect(await workflowOf(id)).toEqual({
      result: { status: "FAILED", attempts: 1 },
      hookStatus: ["FAILED"],
      attemptsInWorkflow: 0,
    });
  }, 30_000);

  test("runs a lost dispatcher left behind are taken over from what they recorded", async () => {
    const receiver = await receiverFor();
    // lease key 0 is never drawn, so no live dispatcher holds it: the claimer is gone
    const lost = { claimedAt: sql`now()`, claimedBy: 0 };
    const succeeded = await emitAs(`${receiver.url}/succeeded`, (tx, id) =>
      tx
        .update(hookDeliveries)
        .set({ ...lost, status: "SUCCEEDED", attemptCount: 1 })
        .where(inArray(hookDeliveries.id, [id])),
    );
    const pending = await emitAs(`${receiver.url}/pending`, (tx, id) =>
      tx
        .update(hookDeliveries)
        .set({ ...lost, attemptCount: 1, nextAttemptAt: new Date() })
        .where(inArray(hookDeliveries.id, [id])),
    );
    const neverSent = await emitAs(`${receiver.url}/never-sent`, (tx, id) =>
      tx
        .update(hookDeliveries)
        .set(lost)
        .where(inArray(hookDeliveries.id, [id])),
    );

    // the SUCCEEDED one gets its workflow and is not sent again
    expect(await workflowOf(succeeded)).toEqual({
      result: { status: "SUCCEEDED", attempts: 1 },
      hookStatus: ["SUCCEEDED"],
      attemptsInWorkflow: 0,
    });
    // the PENDING one goes on with attempt 2, the one never sent gets attempt 1
    const rows = await waitForStatus(db, [pending, neverSent], ["SUCCEEDED"], 20_000);
    expect(rows.map((r) => [r.id, r.attemptCount]).sort()).toEqual(
      [
        [pending, 2],
        [neverSent, 1],
      ].sort(),
    );
    expect((await workflowOf(pending)).result).toEqual({ status: "SUCCEEDED", attempts: 2 });
    expect((await workflowOf(neverSent)).result).toEqual({ status: "SUCCEEDED", attempts: 1 });
    expect(receiver.requests.map((r) => r.path).sort()).toEqual(["/never-sent", "/pending"]);
  }, 40_000);

  test("a run claimed by a live dispatcher is left alone until its lease ends", async () => {
    const receiver = await receiverFor();
    const lease = await acquireLease(pg, 5_000);
    let released = false;
    cleanup.push(async () => released || lease.release());
    const id = await emitAs(receiver.url, (tx, id) =>
      tx
        .update(hookDeliveries)
        .set({ claimedAt: sql`now()`, claimedBy: lease.key })
        .where(inArray(hookDeliveries.id, [id])),
    );
    // its attempt 1 may be under way there: several sweeps pass and nothing is sent
    await new Promise((r) => setTimeout(r, 2_500));
    expect(receiver.requests).toHaveLength(0);
    expect((await deliveryRow(db, id)).dispatchedAt).toBeNull();

    await lease.release();
    released = true;
    at(await waitForStatus(db, [id], ["SUCCEEDED"], 20_000));
    expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([id]);
  }, 40_000);
});

describe("two dispatchers", () => {
  test("never both send attempt 1 of the same run", async () => {
    const workers = await Promise.all([
      startWorker({ address, backoffBaseMs: 300 }),
      startWorker({ address, backoffBaseMs: 300 }),
    ]);
    try {
      const receiver = await receiverFor();
      const a = await createAssistantWithHooks(db, [{ url: receiver.url, secret }]);
      const ids = (
        await Promise.all(
          Array.from({ length: 200 }, () =>
            emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() }),
          ),
        )
      ).flatMap((r) => r.deliveryIds);
      const rows = await waitForStatus(db, ids, ["SUCCEEDED"], 60_000);
      expect(rows.every((r) => r.attemptCount === 1)).toBe(true);
      // give a second sender, if there were one, time to be seen
      await new Promise((r) => setTimeout(r, 1_000));
      const sent = receiver.requests.map((r) => r.headers["webhook-id"] as string);
      expect(sent).toHaveLength(200);
      expect(new Set(sent)).toEqual(new Set(ids));
      const attemptLines = workers.flatMap((w) =>
        w.lines.filter((l) => l.msg === "hook attempt" && ids.includes(l.deliveryId as string)),
      );
      expect(attemptLines).toHaveLength(200);
    } finally {
      await Promise.all(workers.map((w) => w.kill("SIGKILL")));
    }
  }, 90_000);
});

describe("a dispatcher killed after its claim", () => {
  test("has its run taken over at once by another, sent again with the same webhook-id", async () => {
    // a minute-long HTTP time-out: only the ended lease, not the claim's grace period, delivers in time
    const options = { address, backoffBaseMs: 60_000, timeoutMs: 60_000 };
    const lost = await startWorker(options);
    let other: TestWorker | null = null;
    try {
      const receiver = await receiverFor((_req, i) => (i === 0 ? "hang" : { status: 200 }));
      const id = await emitTo(receiver.url);
      await receiver.waitForRequests(1, 15_000);
      other = await startWorker(options);
      await lost.kill("SIGKILL");

      const row = at(await waitForStatus(db, [id], ["SUCCEEDED"], 30_000));
      expect(row.attemptCount).toBe(1);
      expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([id, id]);
      expect((await attemptsOf(db, id)).map((x) => x.statusCode)).toEqual([200]);
      expect(await workflowOf(id)).toEqual({
        result: { status: "SUCCEEDED", attempts: 1 },
        hookStatus: ["SUCCEEDED"],
        attemptsInWorkflow: 0,
      });
    } finally {
      await Promise.all([lost.kill("SIGKILL"), other?.kill("SIGKILL")]);
    }
  }, 90_000);
});

describe("a dispatcher that never sweeps", () => {
  test("takes up an event on the wake-up its emit sends after the commit", async () => {
    const base = loadConfig();
    const config = { ...base, temporal: { ...base.temporal, address } };
    const deliverAttempt = createActivities({
      db,
      secretBox: createSecretBox(config.encryptionKey),
      config,
    }).deliverAttempt;
    const receiver = await receiverFor();
    const a = await createAssistantWithHooks(db, [{ url: receiver.url, secret }]);
    const emitHere = () =>
      emitOne(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() });
    // the first is taken by the claim the dispatcher makes when its LISTEN starts; after it, no sweep
    // and no attempt under way: only the wake-up can bring the second
    const first = await emitHere();
    const dispatcher = await startDispatcher({ db, sql: pg, config, deliverAttempt, sweepIntervalMs: 3_600_000 });
    try {
      await waitForStatus(db, [first], ["SUCCEEDED"], 20_000);
      const second = await emitHere();
      expect(at(await waitForStatus(db, [second], ["SUCCEEDED"], 20_000)).attemptCount).toBe(1);
      expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([first, second]);
    } finally {
      await dispatcher.stop();
    }
  }, 60_000);
});
