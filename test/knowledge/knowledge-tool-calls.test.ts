// Websocket calls whose (fake realtime) LLM calls a knowledge_base tool: the customer's search service
// (url mode, a real local HTTP server) and one of our knowledge bases (knowledgeBaseId mode), searched
// hybrid: the API and the bridge both use a local embeddings provider.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { toolFailureMessage } from "../../src/calls/tool-webhook";
import { at } from "../hooks/fixtures";
import { speech } from "../helpers/speech";
import { answerEmbeddings } from "../helpers/fake-embeddings";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { dialNative } from "../helpers/ws-caller";
import { createAssistant, startWorld, type World } from "../bridge/fixtures";

let world: World;
let search: Receiver;
let garbage: Receiver;
let slow: Receiver;
let embeddings: Receiver;

beforeAll(async () => {
  embeddings = await startReceiver(answerEmbeddings);
  const hybrid = { EMBEDDINGS_URL: `${embeddings.url}/v1`, EMBEDDINGS_MODEL: "fake-embed-1" };
  [world, search, garbage, slow] = await Promise.all([
    startWorld({ KNOWLEDGE_TIMEOUT_MS: "800", ...hybrid }, hybrid),
    startReceiver(() => ({
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        results: [
          { content: "Parking is free behind the building.", source: "faq.md", score: 0.9 },
          { content: "The garage closes at 10 pm.", score: 0.5 },
          { content: "A third result the LLM must not see." },
        ],
      }),
    })),
    startReceiver(() => ({ status: 200, body: JSON.stringify({ answer: "leaked internal garbage" }) })),
    startReceiver(() => "hang"),
  ]);
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await Promise.all([search?.close(), garbage?.close(), slow?.close(), embeddings?.close()]);
});

/** One call: the caller asks, the LLM calls `tools` at once; the finished call's messages. */
async function callWith(extensions: unknown[], toolCalls: { name: string; arguments: Record<string, unknown> }[]) {
  const assistant = await createAssistant(world, {
    extensions,
    fake: { turns: [{ userSays: "Where can I park?", reply: { toolCalls } }] },
  });
  const caller = await dialNative(world.bridge.url, {
    assistantId: assistant.id,
    sampleRate: "8000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.say(await speech("Where can I park?", 8000));
  await caller.waitFor((e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final, 15_000);
  caller.sendJson({ type: "hangup" });
  await caller.closed;
  const { tenant } = world;
  for (let i = 0; ; i++) {
    const list = await tenant.org.get(`${tenant.P}/agent-tasks?size=100`);
    const task = (list.body.data as any[]).find((t) => t.callId === callId);
    const detail = task && (await tenant.org.get(`${tenant.P}/agent-tasks/${task.id}`)).body.data;
    if (detail?.messages) return { messages: detail.messages as any[], provider: at(assistant.fake.sessions) };
    if (i > 100) throw new Error("the call's messages never arrived");
    await Bun.sleep(100);
  }
}

test("url mode: the bridge POSTs the contract's body with the bearer token; at most maxResults reach the LLM", async () => {
  const { messages, provider } = await callWith(
    [
      {
        type: "knowledge_base",
        parameters: { url: `${search.url}/search`, maxResults: 2, authToken: "kb-secret-token" },
      },
    ],
    [{ name: "search_knowledge_base", arguments: { query: "parking" } }],
  );
  const request = search.requests.at(-1)!;
  expect(request.headers.authorization).toBe("Bearer kb-secret-token");
  const body = JSON.parse(request.body.toString());
  expect(body).toMatchObject({ type: "knowledge_base_search", query: "parking", maxResults: 2 });
  expect(typeof body.callId).toBe("string");
  const call = messages.find((m) => m.type === "tool_call");
  const result = messages.find((m) => m.type === "tool_result");
  expect(call).toMatchObject({ toolName: "search_knowledge_base", parameters: { query: "parking" } });
  expect(result.toolName).toBe("search_knowledge_base");
  expect(typeof result.durationMs).toBe("number");
  expect(JSON.parse(result.text)).toEqual({
    results: [
      { content: "Parking is free behind the building.", source: "faq.md", score: 0.9 },
      { content: "The garage closes at 10 pm.", score: 0.5 },
    ],
  });
  expect(provider.toolOutputs.map((o) => o.output)).toEqual([result.text]);
  expect(JSON.stringify(messages)).not.toContain("kb-secret-token");
}, 30_000);

test("url mode: garbage and a service that never answers give the generic error string", async () => {
  const { messages } = await callWith(
    [
      { type: "knowledge_base", parameters: { name: "kb_garbage", url: `${garbage.url}/search` } },
      { type: "knowledge_base", parameters: { name: "kb_slow", url: `${slow.url}/search` } },
    ],
    [
      { name: "kb_garbage", arguments: { query: "parking" } },
      { name: "kb_slow", arguments: { query: "parking" } },
    ],
  );
  const results = messages.filter((m) => m.type === "tool_result");
  expect(results.map((r) => r.text)).toEqual([toolFailureMessage, toolFailureMessage]);
  expect(JSON.stringify(messages)).not.toContain("leaked internal garbage");
}, 30_000);

test("knowledgeBaseId mode: our own search answers the tool call", async () => {
  const { tenant } = world;
  const kb = (await tenant.org.post(`${tenant.P}/knowledge-bases`, { name: "faq" })).body.data.id;
  await tenant.org.post(`${tenant.P}/knowledge-bases/${kb}/documents`, {
    title: "Visiting us",
    content: "# Parking\n\nVisitors park for free in the lot behind the building.\n\n# Pets\n\nDogs are welcome.",
  });
  const { messages } = await callWith(
    [{ type: "knowledge_base", parameters: { knowledgeBaseId: kb, maxResults: 1 } }],
    [{ name: "search_knowledge_base", arguments: { query: "where do visitors park" } }],
  );
  const result = messages.find((m) => m.type === "tool_result");
  const parsed = JSON.parse(result.text);
  expect(parsed.results).toHaveLength(1);
  expect(parsed.results[0]).toMatchObject({
    title: "Visiting us",
    content: "Parking\n\nVisitors park for free in the lot behind the building.",
  });
  // in use: the knowledge base cannot be deleted
  expect((await tenant.org.delete(`${tenant.P}/knowledge-bases/${kb}`)).status).toBe(409);
}, 30_000);

test("knowledgeBaseId mode with embeddings: the tool finds a chunk by meaning, with no word in common", async () => {
  const { tenant } = world;
  const kb = (await tenant.org.post(`${tenant.P}/knowledge-bases`, { name: "policies" })).body.data.id;
  for (const content of ["Returns are reimbursed within 30 days of delivery.", "Gift cards never expire."])
    await tenant.org.post(`${tenant.P}/knowledge-bases/${kb}/documents`, { title: "Policy", content });
  const { messages } = await callWith(
    [{ type: "knowledge_base", parameters: { knowledgeBaseId: kb, maxResults: 1 } }],
    [{ name: "search_knowledge_base", arguments: { query: "I want my money back" } }],
  );
  const result = JSON.parse(messages.find((m) => m.type === "tool_result").text);
  expect(result.results.map((r: { content: string }) => r.content)).toEqual([
    "Returns are reimbursed within 30 days of delivery.",
  ]);
  // the bridge embedded the question itself
  expect(embeddings.requests.some((r) => JSON.parse(r.body.toString()).input[0] === "I want my money back")).toBe(true);
}, 30_000);
