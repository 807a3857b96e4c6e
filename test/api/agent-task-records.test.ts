// What a finished call leaves readable through the API: messages, summary and the recording
// (GET …/agent-tasks/{id} and …/recording), the list filters, tenant isolation and the retention.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseWav } from "../../src/audio/wav";
import { rms } from "../../src/audio/pcm";
import { deleteExpiredCallRecords } from "../../src/calls/call-records";
import { eq } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { callRecordings, callRecords } from "../../src/db/schema";
import { createTenant, startTestApi } from "../helpers/api";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { speech } from "../helpers/speech";
import { dialNative } from "../helpers/ws-caller";
import { agentTask, createAssistant, hookFor, startWorld, type World } from "../bridge/fixtures";

let world: World;
let worker: TestWorker;
let taskId: string;
let callId: string;

beforeAll(async () => {
  const { address } = await ensureTemporal();
  [world, worker] = await Promise.all([startWorld(), startWorker({ address, backoffBaseMs: 1_000 })]);
  const assistant = await createAssistant(world, {
    greeting: "Hello, Acme here.",
    fake: { turns: [{ userSays: "What time do you open?", reply: { text: "We open at nine." } }] },
  });
  const caller = await dialNative(
    world.bridge.url,
    { assistantId: assistant.id, sampleRate: "16000" },
    { authorization: `Bearer ${world.tenant.orgToken}` },
  );
  const ready = await caller.waitFor((e) => e.type === "ready");
  callId = ready.callId;
  caller.startStreaming();
  await caller.waitForAgentSaid("Hello, Acme here.");
  await caller.say(await speech("What time do you open?", 16000));
  await caller.waitForAgentSaid("We open at nine.");
  caller.sendJson({ type: "hangup" });
  await caller.closed;
  await hookFor(world, callId, "call_concluded");
  taskId = (await agentTask(world, callId)).id;
}, 90_000);
afterAll(async () => {
  await world?.stop();
  await worker?.kill();
});

describe("a finished call through the API", () => {
  test("the task carries the messages, the summary and the recording's descriptor", async () => {
    const { tenant } = world;
    const res = await tenant.org.get(`${tenant.P}/agent-tasks/${taskId}`);
    expect(res.status).toBe(200);
    const task = res.body.data;
    expect(task).toMatchObject({ id: taskId, callId, status: "completed", transport: { type: "websocket" } });
    expect(task.shortSummary).toBe(world.chat.summary.shortSummary);
    expect(task.summary).toBe(world.chat.summary.summary);
    const texts = (task.messages as any[]).filter((m) => m.type === "text").map((m) => `${m.role}: ${m.text}`);
    expect(texts).toContain("ASSISTANT: Hello, Acme here.");
    expect(texts).toContain("ASSISTANT: We open at nine.");
    expect(texts.some((t) => t.startsWith("USER: "))).toBe(true);
    expect(task.recording).toEqual({
      contentType: "audio/wav",
      bytes: expect.any(Number),
      path: `${tenant.P}/agent-tasks/${taskId}/recording`,
    });

    // the same messages the hook received
    const concluded = await hookFor(world, callId, "call_concluded");
    expect(task.messages).toEqual(concluded.messages);
  });

  test("GET …/recording is the call's WAV with both sides in it", async () => {
    const { tenant } = world;
    const res = await fetch(`${world.api.url}${tenant.P}/agent-tasks/${taskId}/recording`, {
      headers: { authorization: `Bearer ${tenant.orgToken}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("audio/wav");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    const bytes = Buffer.from(await res.arrayBuffer());
    const task = (await tenant.org.get(`${tenant.P}/agent-tasks/${taskId}`)).body.data;
    expect(bytes.length).toBe(task.recording.bytes);
    const wav = parseWav(bytes); // RECORDING_FORMAT=ulaw (the default): G.711 mu-law at 8 kHz
    expect(wav.sampleRate).toBe(8000);
    expect(wav.samples.length / 8000).toBeGreaterThan(2);
    expect(rms(wav.samples)).toBeGreaterThan(100);
  });

  test("another tenant gets 404 for the task and its recording; no token gets 401", async () => {
    const other = await createTenant(world.api.url, "records-other");
    const path = `/agent-tasks/${taskId}`;
    expect((await other.org.get(`${other.P}${path}`)).status).toBe(404);
    expect((await other.org.get(`${other.P}${path}/recording`)).status).toBe(404);
    expect((await fetch(`${world.api.url}${world.tenant.P}${path}/recording`)).status).toBe(401);
  });

  test("list filters: transport and creation time", async () => {
    const { tenant } = world;
    const ids = async (query: string) =>
      ((await tenant.org.get(`${tenant.P}/agent-tasks?${query}`)).body.data as any[]).map((t) => t.id);
    expect(await ids("transport=websocket")).toContain(taskId);
    expect(await ids("transport=sip")).not.toContain(taskId);
    const created = new Date((await agentTask(world, callId)).createdAt).getTime();
    expect(await ids(`createdAfter=${new Date(created - 1000).toISOString()}`)).toContain(taskId);
    expect(await ids(`createdAfter=${new Date(created + 1000).toISOString()}`)).not.toContain(taskId);
    expect(await ids(`createdBefore=${new Date(created + 1000).toISOString()}`)).toContain(taskId);
    const bad = await tenant.org.get(`${tenant.P}/agent-tasks?transport=pigeon`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("transport");
  });

  test("POST …/to-scenario makes a scripted scenario of the call: its caller's words, ending the same way", async () => {
    const { tenant } = world;
    const task = (await tenant.org.get(`${tenant.P}/agent-tasks/${taskId}`)).body.data;
    const said = (task.messages as any[]).filter((m) => m.type === "text" && m.role === "USER").map((m) => m.text);
    expect(said.length).toBeGreaterThan(0);
    const res = await tenant.org.post(`${tenant.P}/agent-tasks/${taskId}/to-scenario`);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      kind: "scripted",
      turns: said.map((text) => ({ say: text })),
      toolMocks: [],
      criteria: [{ name: "ends the same way", type: "endedReason", in: [task.endedReason], required: true }],
    });
    const read = await tenant.org.get(`${tenant.P}/test-scenarios/${res.body.data.id}`);
    expect(read.body.data).toEqual(res.body.data);
    const other = await createTenant(world.api.url, "other");
    expect((await other.org.post(`${other.P}/agent-tasks/${taskId}/to-scenario`)).status).toBe(404);
  });
});

describe("retention", () => {
  test("past RECORDING_RETENTION_DAYS the API shows neither messages nor recording, and its cleanup deletes them", async () => {
    const { tenant } = world;
    const { db, close } = createDb(process.env.DATABASE_URL!);
    const rowsOfCall = async () =>
      (await db.select().from(callRecords).where(eq(callRecords.callId, callId))).length +
      (await db.select().from(callRecordings).where(eq(callRecordings.callId, callId))).length;
    try {
      expect(await deleteExpiredCallRecords(db, 1)).toBe(0); // a day's retention keeps today's call
      expect(await rowsOfCall()).toBe(2);
      const expired = await startTestApi({ RECORDING_RETENTION_DAYS: "0" });
      try {
        const client = expired.client(tenant.orgToken);
        const task = (await client.get(`${tenant.P}/agent-tasks/${taskId}`)).body.data;
        expect(task).toMatchObject({ id: taskId, messages: null, recording: null });
        expect((await client.get(`${tenant.P}/agent-tasks/${taskId}/recording`)).status).toBe(404);
        // an API process runs the cleanup from its start on (then hourly): past 0 days, the call's rows go
        while ((await rowsOfCall()) > 0) await Bun.sleep(50);
      } finally {
        await expired.stop();
      }
    } finally {
      await close();
    }
    const after = (await tenant.org.get(`${tenant.P}/agent-tasks/${taskId}`)).body.data;
    expect(after).toMatchObject({ id: taskId, status: "completed", messages: null, recording: null });
  });
});
