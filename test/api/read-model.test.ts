// Issue 28, item 1: the read model (src/db/read-model.ts) is exact across processes. Two real API
// processes on one database write and read concurrently: a read made after a write's answer, on either
// process, never sees what was there before; a killed LISTEN connection empties the cache; and a call
// start (the bridge's loadCallAssistant) sees a change answered just before.
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createDb, readModelOf } from "../../src/db/client";
import { loadCallAssistant } from "../../src/calls/load-assistant";
import { READ_MODEL_CHANNEL } from "../../src/db/read-model";
import { sql as sql_ } from "drizzle-orm";
import { routeCall } from "../../src/sip/route-call";
import { spawnApi, type ApiProcess } from "../helpers/api-process";
import { eventually, until } from "../sip/helpers/eventually";
import { client, createTenant, type Tenant } from "../helpers/api";

let a: ApiProcess;
let b: ApiProcess;
let tenant: Tenant;
const sql = postgres(process.env.DATABASE_URL!, { max: 2, onnotice: () => {} });
// this test process reads as a bridge does: its own handle, its own read model
const bridge = createDb(process.env.DATABASE_URL!, { max: 2, name: "bridge" });

beforeAll(async () => {
  [a, b] = await Promise.all([spawnApi(), spawnApi()]);
  tenant = await createTenant(a.url, "read-model");
}, 60_000);
afterAll(async () => {
  a?.stop();
  b?.stop();
  await bridge.close();
  await sql.end();
});

const on = (api: ApiProcess) => client(api.url, tenant.orgToken);

/** The read model's memory answers of a process, from its /metrics. */
async function memoryReads(api: ApiProcess) {
  const res = await fetch(`${api.url}/metrics`, { headers: { authorization: `Bearer ${process.env.METRICS_TOKEN}` } });
  const line = (await res.text()).split("\n").find((l) => l.startsWith('vas_read_model_reads_total{source="memory"}'));
  return Number(line?.split(" ")[1] ?? 0);
}

/** Writes one assistant `rounds` times alternately through both processes; every read after an answer sees it. */
async function writeAndReadBack(label: string, rounds: number) {
  const { P } = tenant;
  const created = await on(a).post(`${P}/assistants`, { name: `${label}-0` });
  expect(created.status).toBe(201);
  const id = created.body.data.id as string;
  for (let i = 1; i <= rounds; i++) {
    const writer = i % 2 === 0 ? a : b;
    const name = `${label}-${i}`;
    expect((await on(writer).put(`${P}/assistants/${id}`, { name, systemPrompt: name })).status).toBe(200);
    for (const reader of [a, b, a, b]) {
      const read = await on(reader).get(`${P}/assistants/${id}`);
      expect(read.body.data.name).toBe(name);
    }
    const page = await on(i % 2 === 0 ? b : a).get(`${P}/assistants?size=100`);
    expect(page.body.data.find((x: { id: string }) => x.id === id).name).toBe(name);
  }
  return id;
}

test("a read after a write's answer never sees the old value, on the same process or the other, under concurrent writes", async () => {
  const before = (await memoryReads(a)) + (await memoryReads(b));
  await Promise.all([writeAndReadBack("x", 60), writeAndReadBack("y", 60)]);
  // the reads were served from memory, not only from Postgres: the cache was there to be wrong
  expect((await memoryReads(a)) + (await memoryReads(b))).toBeGreaterThan(before);
}, 120_000);

/** A realtime strategy made through process a; its id. */
async function createStrategy(name: string): Promise<string> {
  const made = await on(a).post(`${tenant.P}/llm-generation-strategies`, {
    name,
    type: "openai_realtime",
    parameters: { voice: { voiceId: "alloy" } },
  });
  return made.body.data.id as string;
}

test("a strategy changed through one process is read anew by the other", async () => {
  const { P } = tenant;
  const id = await createStrategy("s");
  for (let i = 0; i < 20; i++) {
    const voiceId = `voice-${i}`; // a newer voice: provider "openai" lets any name pass
    const writer = i % 2 === 0 ? a : b;
    const put = await on(writer).put(`${P}/llm-generation-strategies/${id}`, {
      name: "s",
      type: "openai_realtime",
      parameters: { voice: { voiceId, provider: "openai" } },
    });
    expect(put.status).toBe(200);
    for (const reader of [b, a]) {
      const read = await on(reader).get(`${P}/llm-generation-strategies/${id}`);
      expect(read.body.data.parameters.voice.voiceId).toBe(voiceId);
    }
  }
}, 60_000);

/** the backends LISTENing on the read model's channel (each process's LISTEN connection) */
const listeners = async () =>
  (
    await sql`select pid from pg_stat_activity where datname = current_database() and state = 'idle'
      and query = ${`listen "${READ_MODEL_CHANNEL}"`}`
  ).map((r) => r.pid as number);

async function killListeners() {
  // both API processes listening again after the last kill (postgres.js reconnects on its own, a round
  // of the test can be quicker than that)
  const killed = await eventually(
    async () => {
      const now = await listeners();
      return now.length >= 2 && now;
    },
    "both API processes listening",
    10_000,
    25,
  );
  expect(killed.length).toBeGreaterThanOrEqual(2);
  await sql`select pg_terminate_backend(pid) from unnest(${killed}::int[]) pid`;
  return killed;
}

test("a write answered while the LISTEN connections are being killed is read back on the other process", async () => {
  const { P } = tenant;
  const id = (await on(a).post(`${P}/assistants`, { name: "before" })).body.data.id as string;
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 3; i++) await on(a).get(`${P}/assistants/${id}`);
    await killListeners();
    expect((await on(b).put(`${P}/assistants/${id}`, { name: `during-${round}` })).status).toBe(200);
    expect((await on(a).get(`${P}/assistants/${id}`)).body.data.name).toBe(`during-${round}`);
  }
}, 60_000);

test("a lost LISTEN connection empties the cache", async () => {
  const { P } = tenant;
  const id = (await on(a).post(`${P}/assistants`, { name: "kept" })).body.data.id as string;
  for (let i = 0; i < 5; i++) expect((await on(a).get(`${P}/assistants/${id}`)).body.data.name).toBe("kept");
  // a change no NOTIFY tells of: a process that kept its memory across the reconnect would go on with "kept"
  await sql`update assistants set name = 'direct' where id = ${id}`;
  const killed = await killListeners();
  // back: postgres.js listens again by itself, and the process empties its cache as it does
  for (let i = 0; i < 400; i++) {
    const now = await listeners();
    if (now.length >= killed.length && !now.some((pid) => killed.includes(pid))) break;
    await Bun.sleep(25);
  }
  for (let i = 0; i < 5; i++) expect((await on(a).get(`${P}/assistants/${id}`)).body.data.name).toBe("direct");
}, 60_000);

test("a call start sees an assistant change answered just before", async () => {
  const { P } = tenant;
  const strategyId = await createStrategy("call");
  const made = await on(a).post(`${P}/assistants`, {
    name: "call",
    systemPrompt: "p-0",
    llmAudioContentGenerationStrategyId: strategyId,
  });
  const id = made.body.data.id as string;
  for (let i = 1; i <= 20; i++) {
    // warm: the bridge holds the assistant in memory when the change comes
    expect((await loadCallAssistant(bridge.db, "assistant", id))?.systemPrompt).toBe(`p-${i - 1}`);
    const writer = i % 2 === 0 ? a : b;
    const body = { name: "call", systemPrompt: `p-${i}`, llmAudioContentGenerationStrategyId: strategyId };
    expect((await on(writer).put(`${P}/assistants/${id}`, body)).status).toBe(200);
    expect((await loadCallAssistant(bridge.db, "assistant", id))?.systemPrompt).toBe(`p-${i}`);
    const parameters = { voice: { voiceId: `v-${i}`, provider: "openai" } };
    const put = await on(writer).put(`${P}/llm-generation-strategies/${strategyId}`, {
      name: "call",
      type: "openai_realtime",
      parameters,
    });
    expect(put.status).toBe(200);
    expect((await loadCallAssistant(bridge.db, "assistant", id))?.strategy?.parameters).toEqual(parameters);
  }
}, 60_000);

test("a token revoked through one process is refused by the other as soon as the revocation has answered", async () => {
  const admin = client(a.url, process.env.ADMIN_TOKEN!);
  for (let i = 0; i < 10; i++) {
    const made = await admin.post(`/api/v1/vendors/${tenant.vendorId}/api-tokens`, {
      name: `revoked-${i}`,
      organizationId: tenant.organizationId,
    });
    const token = made.body.data.token as string;
    const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a];
    // known valid, and kept, by the reading process
    for (let j = 0; j < 3; j++)
      expect((await client(reader.url, token).get(`${tenant.P}/assistants?size=1`)).status).toBe(200);
    const revoked = await client(writer.url, process.env.ADMIN_TOKEN!).delete(
      `/api/v1/vendors/${tenant.vendorId}/api-tokens/${made.body.data.id}`,
    );
    expect(revoked.status).toBe(200);
    expect((await client(reader.url, token).get(`${tenant.P}/assistants?size=1`)).status).toBe(401);
  }
}, 60_000);

test("a call's route follows a number moved to another assistant, and a number's change, at once", async () => {
  const { P } = tenant;
  const credential = await on(a).post(`${P}/sip/credentials`, {
    hostname: "sip.trunk.example",
    port: 5060,
    username: "read-model",
    password: "s3cr3t-pw",
  });
  expect(credential.status).toBe(201);
  const credentialId = credential.body.data.id as string;
  const numbers = `${P}/sip/credentials/${credentialId}/phone-numbers`;
  const number = await on(a).post(numbers, { phoneNumber: "+14155550199" });
  const numberId = number.body.data.id as string;
  const [first, second] = await Promise.all(
    ["route-1", "route-2"].map(async (name) => (await on(a).post(`${P}/assistants`, { name })).body.data.id as string),
  );
  const route = async () => (await routeCall(bridge.db, credentialId, "+14155550199"))?.assistant.id ?? null;
  expect(await route()).toBeNull();
  for (let i = 0; i < 10; i++) {
    const [from, to] = i % 2 === 0 ? [second!, first!] : [first!, second!];
    const [writer, other] = i % 2 === 0 ? [a, b] : [b, a];
    expect((await on(writer).put(`${P}/assistants/${from}`, { name: "off" })).status).toBe(200);
    expect((await on(other).put(`${P}/assistants/${to}`, { name: "on", telephoneNumberId: numberId })).status).toBe(
      200,
    );
    for (let j = 0; j < 3; j++) expect(await route()).toBe(to);
  }
  // the number itself changes: the old spelling routes nowhere any more
  const moved = await on(b).put(`${numbers}/${numberId}`, { phoneNumber: "+14155550198" });
  expect(moved.status).toBe(200);
  expect(await route()).toBeNull();
}, 60_000);

test("reads stay in memory while every connection of the pool is busy", async () => {
  // a pool of one, held by a slow query: ticks queued behind it would come back after the lease
  const busy = createDb(process.env.DATABASE_URL!, { max: 1, name: "busy" });
  try {
    const model = readModelOf(busy.db);
    const probe = () =>
      model.read(
        "probe",
        () => [],
        async () => "value",
      );
    await probe();
    await until("the first tick", () => model.trusted());
    // then() sends it: a query is lazy until asked for its result
    const slow = busy.db.execute(sql_`select pg_sleep(0.6)`).then(() => {});
    const lapsed: number[] = [];
    for (const end = performance.now() + 500; performance.now() < end; await Bun.sleep(20)) {
      await probe();
      if (!model.trusted()) lapsed.push(performance.now());
    }
    await slow;
    expect(lapsed).toHaveLength(0);
  } finally {
    await busy.close();
  }
});

test("a kept value read just after the event loop stalled past the lease waits for a tick, not Postgres", async () => {
  const stalled = createDb(process.env.DATABASE_URL!, { max: 1, name: "stalled" });
  try {
    const model = readModelOf(stalled.db);
    let loads = 0;
    const probe = () =>
      model.read(
        "probe",
        () => [],
        async () => ++loads,
      );
    await probe();
    await until("the first tick", () => model.trusted());
    const kept = (await probe())!; // the first load overlapped the LISTEN's start, which empties the model
    expect(await probe()).toBe(kept);
    // busy for longer than the 100 ms lease, as a loop starting calls is: no tick goes out or comes back
    for (const end = performance.now() + 150; performance.now() < end; );
    expect(model.trusted()).toBe(false);
    expect(await probe()).toBe(kept);
    expect(loads).toBe(kept);
  } finally {
    await stalled.close();
  }
});
