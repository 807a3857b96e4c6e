// The knowledge_base tool against a real local search service: what reaches the LLM, and what never does.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { runKnowledgeTool } from "../../src/calls/knowledge-tool";
import { toolFailureMessage } from "../../src/calls/tool-webhook";
import { createOutboundGuard } from "../../src/net/outbound-guard";
import type { KnowledgeTool } from "../../src/voice/tools";

const guard = createOutboundGuard({ allowCidrs: ["127.0.0.0/8"] });
let server: ReturnType<typeof Bun.serve>;
let base: string;

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/text") return new Response("We open at nine.");
      if (path === "/many")
        return Response.json({
          results: Array.from({ length: 50 }, (_, i) => ({ content: `fact ${i}`, score: 50 - i })),
        });
      if (path === "/long") return Response.json({ results: [{ content: "x".repeat(10_000) }] });
      if (path === "/huge") return new Response("y".repeat(2 * 1024 * 1024));
      if (path === "/broken-json") return new Response('{"results": [');
      if (path === "/no-content") return Response.json({ results: [{ text: "internal detail" }] });
      return new Response("boom: internal detail", { status: 503 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.stop(true));

const tool = (path: string, maxResults = 3): KnowledgeTool => ({
  tool: { name: "search_knowledge_base", description: "", parameters: {} },
  maxResults,
  knowledge: { url: `${base}${path}`, authToken: null },
});
const run = (path: string, maxResults?: number) =>
  runKnowledgeTool({
    tool: tool(path, maxResults),
    query: "hours",
    callId: "c1",
    guard,
    timeoutMs: 2000,
    search: () => Promise.reject(new Error("unused")),
  });

test("plain text is one result; JSON results are cut to maxResults and each result to 4,000 characters", async () => {
  expect(JSON.parse((await run("/text")).output)).toEqual({ results: [{ content: "We open at nine." }] });
  const many = JSON.parse((await run("/many", 4)).output);
  expect(many.results.map((r: { content: string }) => r.content)).toEqual(["fact 0", "fact 1", "fact 2", "fact 3"]);
  const long = JSON.parse((await run("/long")).output);
  expect(long.results[0].content.length).toBeLessThanOrEqual(4001);
});

test("a huge body, broken JSON, a wrong shape and an error status give the generic string and nothing of the body", async () => {
  for (const path of ["/huge", "/broken-json", "/no-content", "/error"]) {
    const result = await run(path);
    expect(result.ok).toBe(false);
    expect(result.output).toBe(toolFailureMessage);
  }
});

test("our own search: a failure or a time-out gives the generic string", async () => {
  const own: KnowledgeTool = { ...tool("/"), knowledge: { knowledgeBaseId: "00000000-0000-4000-8000-000000000000" } };
  const failing = await runKnowledgeTool({
    tool: own,
    query: "q",
    callId: "c1",
    guard,
    timeoutMs: 1000,
    search: () => Promise.reject(new Error("database away")),
  });
  expect(failing).toMatchObject({ ok: false, output: toolFailureMessage, error: "database away" });
  const slow = await runKnowledgeTool({
    tool: own,
    query: "q",
    callId: "c1",
    guard,
    timeoutMs: 100,
    search: () => new Promise(() => {}),
  });
  expect(slow).toMatchObject({ ok: false, output: toolFailureMessage, error: "timed out after 100 ms" });
});
