// Campaign requests never wait on Temporal: POST P/campaigns, pause, resume and cancel answer once
// Postgres holds the change, with the API's Temporal address a black hole it never even connects to.
// The worker, started later against a real Temporal, signals each campaign's workflow the latest
// change; once it runs, a change reaches the workflow at once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { inArray } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { campaigns } from "../../src/db/schema";
import { connectTemporal } from "../../src/temporal/client";
import { campaignWorkflowId } from "../../workflows/ids";
import {
  createBookingAssistant,
  createCallerNumber,
  createTenant,
  startTestApi,
  type Tenant,
  type TestApi,
} from "../helpers/api";
import { ensureTemporal, freePort, startWorker, taskQueueEnv, type TestWorker } from "../helpers/temporal";
import { eventually } from "../sip/helpers/eventually";

const database = createDb(process.env.DATABASE_URL!, { max: 2 });
let blackHole: Server;
const connections: Socket[] = [];
let api: TestApi;
let tenant: Tenant;
let worker: TestWorker | undefined;
let temporal: Awaited<ReturnType<typeof connectTemporal>>;
let body: Record<string, unknown>;

beforeAll(async () => {
  // takes connections and never answers: a Temporal the API would wait on until its time-out
  const port = await freePort();
  blackHole = createServer((socket) => connections.push(socket)).listen(port, "127.0.0.1");
  api = await startTestApi({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
  tenant = await createTenant(api.url, "signals");
  const { phoneNumberId } = await createCallerNumber(tenant, "+15550450000");
  // no bridge holds the credential: nobody is dialled, the workflow only looks every second
  body = {
    name: "reminders",
    assistantId: await createBookingAssistant(tenant),
    phoneNumberId,
    contacts: [{ to: "+15550450001" }, { to: "+15550450002" }],
  };
  const { address } = await ensureTemporal();
  temporal = await connectTemporal({ temporal: { ...loadConfig().temporal, address } });
}, 60_000);
afterAll(async () => {
  await worker?.kill();
  await temporal?.close();
  await api?.stop();
  for (const socket of connections) socket.destroy();
  blackHole?.close();
  await database.close();
});

const post = async (path: string, payload: unknown = {}) => {
  const res = await tenant.org.post(`${tenant.P}/campaigns${path}`, payload);
  return { status: res.status, state: res.body.data?.status, id: res.body.data?.id as string };
};
const workflowOf = (id: string) => temporal.client.workflow.getHandle(campaignWorkflowId(id));
/** The signals the campaign's workflow received, in order. */
const signalsOf = async (id: string) =>
  ((await workflowOf(id).fetchHistory()).events ?? []).flatMap(
    (e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? [],
  );
const pendingSignals = async (ids: string[]) =>
  Object.fromEntries(
    (
      await database.db
        .select({ id: campaigns.id, signal: campaigns.pendingSignal })
        .from(campaigns)
        .where(inArray(campaigns.id, ids))
    ).map((r) => [r.id, r.signal]),
  );

test("with Temporal unreachable every request answers with the new state; the worker then tells the workflows", async () => {
  const canceled = await post("", body);
  expect(canceled).toMatchObject({ status: 201, state: "running" });
  expect(await post(`/${canceled.id}/pause`)).toMatchObject({ status: 200, state: "paused" });
  expect(await post(`/${canceled.id}/resume`)).toMatchObject({ status: 200, state: "running" });
  expect(await post(`/${canceled.id}/cancel`)).toMatchObject({ status: 200, state: "canceled" });
  const running = await post("", body);
  expect(running).toMatchObject({ status: 201, state: "running" });
  // the API never tried Temporal (it used to wait for it, 5 s a request, and log the signal as lost)
  expect(connections).toHaveLength(0);
  // Postgres holds the latest change of each, for the worker
  expect(await pendingSignals([canceled.id, running.id])).toEqual({ [canceled.id]: "cancel", [running.id]: "created" });

  const { address } = await ensureTemporal();
  worker = await startWorker({ address, backoffBaseMs: 1_000 });
  await eventually(
    async () => Object.values(await pendingSignals([canceled.id, running.id])).every((s) => s === null),
    "both changes signalled",
    30_000,
  );
  // the canceled campaign's workflow started with its cancel, saw nothing left to do and ended
  await workflowOf(canceled.id).result();
  expect(await signalsOf(canceled.id)).toEqual(["cancel"]);
  const described = await workflowOf(running.id).describe();
  expect(described).toMatchObject({
    status: { name: "RUNNING" },
    taskQueue: taskQueueEnv(worker.taskQueue).CAMPAIGN_TASK_QUEUE,
  });
  // a signal that comes while a workflow task runs is in the history only once that task is done
  await eventually(async () => (await signalsOf(running.id)).includes("created"), "the creation signalled", 30_000);

  // with the worker up, a change reaches the workflow at once
  expect(await post(`/${running.id}/pause`)).toMatchObject({ status: 200, state: "paused" });
  await eventually(async () => (await signalsOf(running.id)).includes("pause"), "the pause signalled", 30_000);
  expect(await post(`/${running.id}/cancel`)).toMatchObject({ status: 200, state: "canceled" });
  await workflowOf(running.id).result();
  expect(await signalsOf(running.id)).toEqual(["created", "pause", "cancel"]);
  expect(connections).toHaveLength(0);
}, 120_000);
