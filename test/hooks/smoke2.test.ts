import { afterAll, beforeAll, expect, test } from "bun:test";
import { startWorker, type TestWorker } from "../helpers/temporal";
import { startReceiver, failTimes, type Receiver } from "../helpers/receiver";
import { callConcluded, createAssistantWithHooks, emit, openDb, waitForStatus } from "./fixtures";
const { db, close } = openDb();
let worker: TestWorker; let receiver: Receiver;
beforeAll(async () => {
  worker = await startWorker({ address: "127.0.0.1:17300", backoffBaseMs: 100 });
  receiver = await startReceiver(failTimes(2));
}, 60_000);
afterAll(async () => { await worker?.kill(); await receiver?.close(); await close(); });
test("smoke", async () => {
  const a = await createAssistantWithHooks(db, [{ url: receiver.url + "/x" }]);
  const { deliveryIds } = await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() });
  await waitForStatus(db, deliveryIds, ["SUCCEEDED"], 20_000);
  console.log("ID", deliveryIds[0]);
}, 30_000);
