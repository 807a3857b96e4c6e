import { afterAll, beforeAll, expect, test } from "bun:test";
import { callToolWebhook, toolFailureMessage } from "../../src/calls/tool-webhook";
import { createOutboundGuard } from "../../src/net/outbound-guard";

const guard = createOutboundGuard({ allowCidrs: ["127.0.0.0/8"] });

type Received = { path: string; headers: Headers; body: any };
const received: Received[] = [];
let server: ReturnType<typeof Bun.serve>;
let base: string;

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      received.push({ path, headers: req.headers, body: await req.json() });
      if (path === "/text") return new Response("Table booked for 2 at 7 pm.");
      if (path === "/json") return Response.json({ booked: true, table: 12 });
      if (path === "/slow") await Bun.sleep(2000);
      return new Response("database exploded: secret stack trace", { status: 500 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.stop(true));

const request = (path: string, extra: Partial<Parameters<typeof callToolWebhook>[0]> = {}) =>
  callToolWebhook({
    serverUrl: `${base}${path}`,
    name: "book_table",
    callId: "0b8f1d9e-4c6a-4a57-9d59-1f1c1b7a2e10",
    transport: { type: "sip", calledNumber: "+15550100", callingNumber: "anonymous" },
    parameters: { people: 2, time: "19:00" },
    guard,
    ...extra,
  });

test("2xx: the body text is the tool result; the spec's body and the static headers are sent", async () => {
  const result = await request("/text", {
    headers: { Authorization: "Bearer tool-secret", "X-Tenant": "acme", "content-type": "text/plain" },
  });
  expect(result).toMatchObject({ output: "Table booked for 2 at 7 pm.", ok: true, status: 200 });
  expect(result.durationMs).toBeGreaterThanOrEqual(0);
  const { headers, body } = received.at(-1)!;
  expect(headers.get("authorization")).toBe("Bearer tool-secret");
  expect(headers.get("x-tenant")).toBe("acme");
  expect(headers.get("content-type")).toBe("application/json");
  expect(body).toEqual({
    type: "tool_webhook",
    name: "book_table",
    callId: "0b8f1d9e-4c6a-4a57-9d59-1f1c1b7a2e10",
    transport: { type: "sip", calledNumber: "+15550100", callingNumber: "anonymous" },
    parameters: { people: 2, time: "19:00" },
  });
});

test("a JSON body is passed through as its text", async () => {
  expect((await request("/json")).output).toBe('{"booked":true,"table":12}');
});

test("an error status gives the LLM the generic string, not the body", async () => {
  expect(await request("/fail")).toMatchObject({ output: toolFailureMessage, ok: false, status: 500 });
});

test("a slow server is cut off at the time-out", async () => {
  const result = await request("/slow", { timeoutMs: 200 });
  expect(result).toMatchObject({
    output: toolFailureMessage,
    ok: false,
    status: null,
    error: "timed out after 200 ms",
  });
  expect(result.durationMs).toBeLessThan(1500);
});

test("a connection failure gives the generic string", async () => {
  const result = await callToolWebhook({
    serverUrl: "http://127.0.0.1:9/x",
    name: "t",
    callId: "c",
    transport: { type: "websocket" },
    parameters: {},
    guard,
  });
  expect(result).toMatchObject({ output: toolFailureMessage, ok: false, status: null });
});
