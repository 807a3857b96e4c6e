// GET /metrics on the API, the bridge and the worker, scraped before and after real requests and a
// real call (fake voice provider, real tool server, hooks delivered through Temporal by a worker).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { InterarrivalJitter } from "../../src/media/interarrival-jitter";
import { startTestApi } from "../helpers/api";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { speech } from "../helpers/speech";
import { dialNative } from "../helpers/ws-caller";
import { createAssistant, hookFor, startWorld, type World } from "../bridge/fixtures";
import { scrape, total } from "./scrape";

let world: World;
let worker: TestWorker;
let tools: Receiver;

beforeAll(async () => {
  const { address } = await ensureTemporal();
  [world, worker, tools] = await Promise.all([
    startWorld(),
    startWorker({ address, backoffBaseMs: 1_000 }),
    startReceiver(),
  ]);
  tools.respond(() => ({ status: 200, body: "Order 42 ships tomorrow." }));
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await Promise.all([worker?.kill(), tools?.close()]);
});

const bridgeMetrics = () => scrape(`${world.bridge.url.replace(/^ws/, "http")}/metrics`);
const workerMetrics = () => {
  const port = worker.lines.find((l) => l.msg === "worker metrics listening")?.port;
  if (!port) throw new Error("the worker did not log its metrics port");
  return scrape(`http://127.0.0.1:${port}/metrics`);
};

describe("API", () => {
  test("requests are counted by route pattern and status, with durations", async () => {
    const { tenant } = world;
    const route = "/api/v1/vendors/:vendorId/organizations/:organizationId/assistants";
    const before = await scrape(`${world.api.url}/metrics`);
    await tenant.org.get(`${tenant.P}/assistants`);
    await tenant.org.get(`${tenant.P}/assistants`);
    const missing = await tenant.org.get(`${tenant.P}/assistants/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    await fetch(`${world.api.url}/no/such/${crypto.randomUUID()}`);
    const after = await scrape(`${world.api.url}/metrics`);
    const delta = (labels: Record<string, string>) =>
      total(after, "vas_http_requests_total", labels) - total(before, "vas_http_requests_total", labels);
    expect(delta({ method: "GET", route, status: "200" })).toBe(2);
    // errors carry the route they matched; paths no route matches share one series
    expect(delta({ method: "GET", route: `${route}/:assistantId`, status: "404" })).toBe(1);
    expect(delta({ method: "GET", route: "unmatched", status: "404" })).toBe(1);
    const count = (s: typeof after) => total(s, "vas_http_request_duration_seconds_count", { method: "GET", route });
    expect(count(after) - count(before)).toBe(2);
    // no series carries a concrete id
    expect(after.some((s) => s.labels.route?.includes(tenant.organizationId))).toBe(false);
  });

  test("the default process metrics are there, but not the heap spaces, whose walk of the heap stalls the event loop", async () => {
    const samples = await bridgeMetrics();
    expect(total(samples, "vas_process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(total(samples, "vas_nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(samples.filter((s) => s.name.startsWith("vas_nodejs_heap_space_"))).toEqual([]);
  });

  test("SIP credentials: open agent tasks against maxAgentTasks", async () => {
    const { tenant } = world;
    const created = await tenant.org.post(`${tenant.P}/sip/credentials`, {
      hostname: "127.0.0.1",
      port: 5999,
      username: "u",
      password: "p",
      maxAgentTasks: 3,
    });
    expect(created.status).toBe(201);
    const credential = created.body.data.id;
    // another API in this process came and went: the gauges still read through a live connection
    const other = await startTestApi();
    await other.stop();
    const samples = await scrape(`${world.api.url}/metrics`);
    expect(total(samples, "vas_sip_credential_max_agent_tasks", { credential })).toBe(3);
    expect(
      samples.some(
        (s) => s.name === "vas_sip_credential_agent_tasks" && s.labels.credential === credential && s.value === 0,
      ),
    ).toBe(true);
    await tenant.org.delete(`${tenant.P}/sip/credentials/${credential}`);
  });
});

describe("bridge and worker around a call", () => {
  test("active calls, setup, voice connect, tool webhook, duration and hook attempts", async () => {
    const assistant = await createAssistant(world, {
      greeting: "Hello.",
      tools: [{ name: "lookup_order", serverUrl: `${tools.url}/orders` }],
      fake: {
        turns: [
          {
            userSays: "Where is my order?",
            reply: { text: "Checking.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] },
          },
        ],
      },
    });
    const before = await bridgeMetrics();
    const workerBefore = await workerMetrics();
    const caller = await dialNative(
      world.bridge.url,
      { assistantId: assistant.id, sampleRate: "16000" },
      { authorization: `Bearer ${world.tenant.orgToken}` },
    );
    const ready = await caller.waitFor((e) => e.type === "ready");
    caller.startStreaming();
    await caller.waitForAgentSaid("Hello.");
    const during = await bridgeMetrics();
    expect(
      total(during, "vas_calls_active", { transport: "websocket" }) -
        total(before, "vas_calls_active", { transport: "websocket" }),
    ).toBe(1);
    await caller.say(await speech("Where is my order?", 16000));
    await caller.waitForAgentSaid("lookup_order:");
    caller.sendJson({ type: "hangup" });
    await caller.closed;
    await hookFor(world, ready.callId, "call_concluded");
    const after = await bridgeMetrics();

    const delta = (name: string, labels: Record<string, string> = {}) =>
      total(after, name, labels) - total(before, name, labels);
    expect(total(after, "vas_calls_active", { transport: "websocket" })).toBe(
      total(before, "vas_calls_active", { transport: "websocket" }),
    );
    expect(delta("vas_call_setup_seconds_count", { transport: "websocket" })).toBe(1);
    expect(delta("vas_voice_provider_connect_seconds_count", { provider: "openai_realtime", outcome: "ok" })).toBe(1);
    expect(delta("vas_tool_webhook_duration_seconds_count", { outcome: "ok" })).toBe(1);
    expect(delta("vas_call_duration_seconds_count", { transport: "websocket", status: "completed" })).toBe(1);
    // the call lasted a few seconds: its duration landed above the first bucket
    expect(delta("vas_call_duration_seconds_sum", { transport: "websocket", status: "completed" })).toBeGreaterThan(2);
    // the agent's audio was paced: the pacer ran every 2 ms or so while it played (seconds of it)
    expect(delta("vas_media_pacing_delay_seconds_count")).toBeGreaterThan(200);

    // both hooks were delivered by the worker process: its attempts and the delivery states show it
    let workerAfter = await workerMetrics();
    for (
      let i = 0;
      i < 50 &&
      total(workerAfter, "vas_hook_attempt_duration_seconds_count", { state: "SUCCEEDED" }) -
        total(workerBefore, "vas_hook_attempt_duration_seconds_count", { state: "SUCCEEDED" }) <
        2;
      i++
    ) {
      await Bun.sleep(100);
      workerAfter = await workerMetrics();
    }
    expect(
      total(workerAfter, "vas_hook_attempt_duration_seconds_count", { state: "SUCCEEDED" }) -
        total(workerBefore, "vas_hook_attempt_duration_seconds_count", { state: "SUCCEEDED" }),
    ).toBe(2);
    expect(total(workerAfter, "vas_hook_deliveries", { state: "SUCCEEDED" })).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

describe("RTP interarrival jitter", () => {
  test("evenly spaced packets have none; alternating 10 ms early and late converge near 20 ms", () => {
    const even = new InterarrivalJitter(8000);
    for (let i = 0; i < 100; i++) even.add(i * 160, i * 20);
    expect(even.ms).toBe(0);
    const uneven = new InterarrivalJitter(8000);
    for (let i = 0; i < 500; i++) uneven.add((i * 160) % 2 ** 32, i * 20 + (i % 2 === 0 ? -10 : 10));
    // every transit difference is 20 ms, so the smoothed estimate approaches 20 ms
    expect(uneven.ms).toBeGreaterThan(19);
    expect(uneven.ms).toBeLessThanOrEqual(20);
  });

  test("a timestamp wrap is not a jump", () => {
    const wrap = new InterarrivalJitter(8000);
    const start = 2 ** 32 - 160 * 10;
    for (let i = 0; i < 40; i++) wrap.add((start + i * 160) % 2 ** 32, i * 20);
    expect(wrap.ms).toBeLessThan(0.001);
  });
});
