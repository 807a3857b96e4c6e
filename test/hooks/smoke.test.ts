import { afterAll, beforeAll, expect, test } from "bun:test";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { startReceiver, failTimes, type Receiver } from "../helpers/receiver";
import { callConcluded, createAssistantWithHooks, emit, openDb, waitForStatus, attemptsOf } from "./fixtures";

const { db, close } = openDb();
let worker: TestWorker; let receiver: Receiver;
beforeAll(async () => {
  const t0 = Date.now();
  const { address } = await ensureTemporal();
  console.log("temporal", Date.now() - t0);
  worker = await startWorker({ address, backoffBaseMs: 100 });
  console.log("worker", Date.now() - t0);
  receiver = await startReceiver(failTimes(2));
}, 60_000);
afterAll(async () => { await worker?.kill(); await receiver?.close(); await close(); });

test("smoke", async () => {
  const a = await createAssistantWithHooks(db, [{ url: receiver.url + "/x", secret: "s3cret" }]);
  const t0 = Date.now();
  const { deliveryIds } = await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() });
  const rows = await waitForStatus(db, deliveryIds, ["SUCCEEDED"], 20_000);
  console.log("delivered in", Date.now() - t0, rows[0].attemptCount);
  console.log(await attemptsOf(db, deliveryIds[0]));
  console.log(receiver.requests.map(r => [r.method, r.receivedAt, r.headers]));
  expect(rows[0].attemptCount).toBe(3);
}, 30_000);
