// Recordings in object storage (RECORDING_STORE=s3) against a real SeaweedFS: calls in both stores
// through one API, the recording route's 302 to a presigned URL, recordingUrl in call_concluded fetched
// as a hook receiver would, RECORDING_IN_HOOKS=false, retention, and the store stopped mid-call: the
// calls conclude meanwhile, the recordings wait in the spool (across a bridge restart) and all reach the
// bucket once it is back. Last, the console's call page plays a recording from the bucket in chromium.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { parseWav } from "../../src/audio/wav";
import { startBridge, type Bridge } from "../../src/bridge/ws-server";
import { deleteExpiredCallRecords } from "../../src/calls/call-records";
import { spoolDirOf } from "../../src/calls/conclusion-writer";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { callRecordings } from "../../src/db/schema";
import { recordingObjectsOf } from "../../src/storage/recording-objects";
import { openBrowser, signInConsole } from "../helpers/chromium";
import { seaweedFs, type SeaweedFs } from "../helpers/seaweedfs";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { dialNative } from "../helpers/ws-caller";
import { eventually } from "../sip/helpers/eventually";
import { agentTask, createAssistant, hookFor, startWorld, type World } from "./fixtures";

const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
const dataDir = mkdtempSync(join(tmpdir(), "recording-store-"));
let store: SeaweedFs;
let world: World;
let worker: TestWorker;
const bridges: Bridge[] = [];

beforeAll(async () => {
  const { address } = await ensureTemporal();
  store = await seaweedFs();
  [world, worker] = await Promise.all([
    startWorld({ ...store.env, BRIDGE_DATA_DIR: dataDir }, store.env),
    startWorker({ address, backoffBaseMs: 1_000 }),
    store.start(),
  ]);
}, 120_000);
afterAll(async () => {
  for (const bridge of bridges) await bridge.stop({ graceMs: 500 });
  await world?.stop();
  await Promise.all([worker?.kill(), store?.close(), close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

/** Another bridge of the world's API and database, with settings of its own. */
async function extraBridge(env: Record<string, string>) {
  const config = loadConfig({
    ...process.env,
    OPENAI_BASE_URL: world.chat.baseUrl,
    OPENAI_REALTIME_URL: world.realtime.url,
    BRIDGE_DATA_DIR: dataDir,
    ...env,
  });
  const bridge = await startBridge(config, { port: 0 });
  bridges.push(bridge);
  return { bridge, config };
}

/** A call that hears the greeting, lasts a moment, and is hung up by the caller; resolves its callId. */
async function callOnce(bridgeUrl: string, assistantId: string, beforeHangup: () => Promise<void> = async () => {}) {
  const caller = await dialNative(bridgeUrl, { assistantId, sampleRate: "8000", token: world.tenant.orgToken });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.waitForAgentAudio();
  await caller.waitFor((e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final);
  await beforeHangup();
  caller.sendJson({ type: "hangup" });
  await caller.closed;
  return callId as string;
}

const recordingRow = async (callId: string) =>
  (await db.select().from(callRecordings).where(eq(callRecordings.callId, callId)))[0];

/** The recording route, not following its redirect. */
const recordingRoute = (taskId: string) =>
  fetch(`${world.api.url}${world.tenant.P}/agent-tasks/${taskId}/recording`, {
    headers: { authorization: `Bearer ${world.tenant.orgToken}` },
    redirect: "manual",
  });

/** A whole WAV of the call: its length is the call's (from the task's times), to the tenth of a second. */
function expectWavOfCall(bytes: Uint8Array, task: { startedAt: string; endedAt: string }) {
  const wav = parseWav(Buffer.from(bytes));
  expect(wav.sampleRate).toBe(8000);
  const callSeconds = (Date.parse(task.endedAt) - Date.parse(task.startedAt)) / 1000;
  expect(Math.abs(wav.samples.length / 8000 - callSeconds)).toBeLessThan(0.2);
}

test("s3: the recording is an object; the route answers 302 to its presigned URL, the hook carries recordingUrl", async () => {
  const assistant = await createAssistant(world, { greeting: "Hello, Acme front desk." });
  const callId = await callOnce(world.bridge.url, assistant.id);
  const concluded = await hookFor(world, callId, "call_concluded");
  const task = await agentTask(world, callId);

  // the object: no tenant name in its key, ids only
  const row = await recordingRow(callId);
  expect(row).toMatchObject({ audio: null, objectKey: `recordings/${world.tenant.organizationId}/${task.id}.wav` });
  const stored = new Uint8Array(await store.client.file(row!.objectKey!).arrayBuffer());
  expect(row!.objectBytes).toBe(stored.length);
  expectWavOfCall(stored, task);

  // the hook: the base64 audio (RECORDING_IN_HOOKS defaults to true) and a URL a receiver fetches
  expect(Buffer.from(concluded.callRecording, "base64").equals(Buffer.from(stored))).toBe(true);
  expect(concluded.recordingUrl).toStartWith(`${store.endpoint}/${store.bucket}/${row!.objectKey}?`);
  const fromHook = await fetch(concluded.recordingUrl);
  expect(fromHook.status).toBe(200);
  expect(Buffer.from(await fromHook.arrayBuffer()).equals(Buffer.from(stored))).toBe(true);
  // the hook's URL lives twelve times the API's (300 s by default)
  expect(new URL(concluded.recordingUrl).searchParams.get("X-Amz-Expires")).toBe("3600");

  // the route: 302 to a presigned URL of the API's lifetime, never cached
  const route = await recordingRoute(task.id);
  expect(route.status).toBe(302);
  expect(route.headers.get("cache-control")).toBe("private, no-store");
  const location = route.headers.get("location")!;
  expect(new URL(location).searchParams.get("X-Amz-Expires")).toBe("300");
  const fetched = await fetch(location);
  expect(fetched.status).toBe(200);
  expect(Buffer.from(await fetched.arrayBuffer()).equals(Buffer.from(stored))).toBe(true);
  // the URL is what grants access: the object itself is not public
  expect((await fetch(`${store.endpoint}/${store.bucket}/${row!.objectKey}`)).status).toBe(403);

  // the task's detail describes the recording by the object's size
  const detail = await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${task.id}`);
  expect(detail.body.data.recording).toMatchObject({ contentType: "audio/wav", bytes: stored.length });
  // the spool kept nothing
  expect(
    readdirSync(spoolDirOf(loadConfig({ BRIDGE_DATA_DIR: dataDir, BRIDGE_INSTANCE_ID: `bridge-test-${process.pid}` }))),
  ).toEqual([]);
}, 60_000);

test("RECORDING_IN_HOOKS=false: call_concluded carries the URL alone", async () => {
  const { bridge } = await extraBridge({
    ...store.env,
    RECORDING_IN_HOOKS: "false",
    BRIDGE_INSTANCE_ID: `no-audio-${process.pid}`,
  });
  const assistant = await createAssistant(world, { greeting: "Hello, Acme front desk." });
  const callId = await callOnce(bridge.url, assistant.id);
  const concluded = await hookFor(world, callId, "call_concluded");
  expect(concluded.callRecording).toBeUndefined();
  const fromHook = await fetch(concluded.recordingUrl);
  expect(fromHook.status).toBe(200);
  expectWavOfCall(new Uint8Array(await fromHook.arrayBuffer()), await agentTask(world, callId));
}, 60_000);

test("postgres beside s3: a call of a bridge on the default store keeps its audio in the row, read with 200", async () => {
  const { bridge } = await extraBridge({ BRIDGE_INSTANCE_ID: `postgres-store-${process.pid}` });
  const assistant = await createAssistant(world, { greeting: "Hello, Acme front desk." });
  const callId = await callOnce(bridge.url, assistant.id);
  const concluded = await hookFor(world, callId, "call_concluded");
  expect(concluded.recordingUrl).toBeUndefined();
  const row = await recordingRow(callId);
  expect(row).toMatchObject({ objectKey: null, objectBytes: null });
  const route = await recordingRoute((await agentTask(world, callId)).id);
  expect(route.status).toBe(200);
  const audio = Buffer.from(await route.arrayBuffer());
  expect(audio.equals(row!.audio!)).toBe(true);
  expect(audio.equals(Buffer.from(concluded.callRecording, "base64"))).toBe(true);
}, 60_000);

test("retention deletes the object with its row", async () => {
  const assistant = await createAssistant(world, { greeting: "Hello, Acme front desk." });
  const callId = await callOnce(world.bridge.url, assistant.id);
  const { objectKey } = await eventually(() => recordingRow(callId), "the recording's row");
  expect(await store.client.exists(objectKey!)).toBe(true);
  // a retention of 0 days: every recording is past it
  const objects = recordingObjectsOf(loadConfig(store.env));
  expect(await deleteExpiredCallRecords(db, 0, objects)).toBeGreaterThanOrEqual(1);
  expect(await store.client.exists(objectKey!)).toBe(false);
  expect(await recordingRow(callId)).toBeUndefined();
}, 60_000);

test("the store stopped mid-call: calls conclude without it, recordings wait in the spool, none is lost", async () => {
  const instance = `outage-${process.pid}`;
  const env = {
    ...store.env,
    BRIDGE_INSTANCE_ID: instance,
    // how long call_concluded may wait for the summary, and so for the upload
    ANALYSIS_TIMEOUT_MS: "3000",
    BRIDGE_HEARTBEAT_TTL_MS: "120000",
  };
  let { bridge, config } = await extraBridge(env);
  const spool = spoolDirOf(config);
  const assistant = await createAssistant(world, { greeting: "Hello, Acme front desk." });

  // three calls: the store goes away while the first runs; the others start and end without it
  const first = callOnce(bridge.url, assistant.id, () => store.stop());
  const callIds = [await first];
  for (let i = 0; i < 2; i++) callIds.push(await callOnce(bridge.url, assistant.id));

  // every call concluded while the store is still away, its hook without the recording
  for (const callId of callIds) {
    const concluded = await hookFor(world, callId, "call_concluded");
    expect(concluded.callRecording).toBeUndefined();
    expect(concluded.recordingUrl).toBeUndefined();
    expect((await agentTask(world, callId)).status).toBe("completed");
    expect(existsSync(join(spool, `${callId}.wav`))).toBe(true);
    expect(await recordingRow(callId)).toBeUndefined();
  }

  // the bridge stops with the recordings still waiting: its next start finds them in the spool
  await bridge.stop({ graceMs: 500 });
  bridges.splice(bridges.indexOf(bridge), 1);
  for (const callId of callIds) expect(existsSync(join(spool, `${callId}.wav`))).toBe(true);
  await store.start();
  ({ bridge } = await extraBridge(env));

  for (const callId of callIds) {
    const row = await eventually(() => recordingRow(callId), `the recording of ${callId} in the bucket`, 30_000);
    const task = await agentTask(world, callId);
    const route = await recordingRoute(task.id);
    expect(route.status).toBe(302);
    const fetched = await fetch(route.headers.get("location")!);
    expect(fetched.status).toBe(200);
    const bytes = new Uint8Array(await fetched.arrayBuffer());
    expect(bytes.length).toBe(row.objectBytes!);
    expectWavOfCall(bytes, task);
  }
  await eventually(() => readdirSync(spool).length === 0, "the spool emptied");
}, 120_000);

// last: it leaves the store stopped
test("console: the call page plays a recording from the bucket (its fetch follows the 302); with the bucket out of reach it says what to check", async () => {
  const assistant = await createAssistant(world, { greeting: "Hello, Acme front desk." });
  const callId = await callOnce(world.bridge.url, assistant.id);
  await eventually(() => recordingRow(callId), "the recording's row");
  const task = await agentTask(world, callId);
  const browser = await openBrowser("recording-store");
  try {
    const { page } = browser;
    await signInConsole(page, world.api.url, world.tenant.orgToken);
    await page.goto(`${world.api.url}/console#/calls/${task.id}`);
    // the audio element holds the object's bytes and knows the call's length
    const playable = `(() => { const a = document.querySelector("#recording"); return a && a.src.startsWith("blob:") && a.readyState >= 1 && a.duration; })()`;
    const seconds = Number(await (await page.waitForFunction(playable, undefined, { timeout: 20_000 })).jsonValue());
    expect(Math.abs(seconds - (Date.parse(task.endedAt) - Date.parse(task.startedAt)) / 1000)).toBeLessThan(0.2);

    // the API still answers 302, the browser cannot follow it: no silent empty player
    await store.stop();
    await page.reload();
    const error = await page.waitForSelector("#recording-error", { timeout: 20_000 });
    expect(await error.textContent()).toContain(
      `Its bucket must allow GET from ${new URL(world.api.url).origin} in its CORS rules`,
    );
    expect(await page.locator("#recording").count()).toBe(0);
  } finally {
    await browser.close();
  }
}, 90_000);
