import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { summarizeCall } from "../../src/voice/summarize";
import { type FakeChatServer, startFakeChatServer } from "../fakes/chat-completions-server";

let chat: FakeChatServer;
beforeAll(async () => (chat = await startFakeChatServer()));
afterAll(() => chat.close());
beforeEach(() => {
  chat.mode = "ok";
  chat.requests.length = 0;
});

const transcript = [
  { role: "USER", text: "When do you open?" },
  { role: "ASSISTANT", text: "From nine to five." },
];
const config = () =>
  loadConfig({ OPENAI_BASE_URL: chat.baseUrl, OPENAI_API_KEY: "sk-summary", SUMMARY_MODEL: "summary-model" });

test("one chat completions request with the transcript gives both summaries", async () => {
  expect(await summarizeCall({ transcript, config: config() })).toEqual(chat.summary);
  expect(chat.requests).toHaveLength(1);
  const request = chat.requests[0]!;
  expect(request.path).toBe("/v1/chat/completions");
  expect(request.headers.authorization).toBe("Bearer sk-summary");
  expect(request.body.model).toBe("summary-model");
  expect(request.body.response_format).toEqual({ type: "json_object" });
  expect(request.body.messages.at(-1).content).toBe("USER: When do you open?\nASSISTANT: From nine to five.");
});

test.each(["error", "not-json"] as const)("a %s reply gives nulls, never a throw", async (mode) => {
  chat.mode = mode;
  expect(await summarizeCall({ transcript, config: config() })).toEqual({ shortSummary: null, summary: null });
});

test("a provider that never answers is cut off by the time-out", async () => {
  chat.mode = "hang";
  const started = performance.now();
  expect(await summarizeCall({ transcript, config: config(), timeoutMs: 300 })).toEqual({
    shortSummary: null,
    summary: null,
  });
  expect(performance.now() - started).toBeLessThan(2000);
});

test("an unreachable endpoint or an empty call gives nulls", async () => {
  const unreachable = loadConfig({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
  expect(await summarizeCall({ transcript, config: unreachable })).toEqual({ shortSummary: null, summary: null });
  expect(await summarizeCall({ transcript: [], config: config() })).toEqual({ shortSummary: null, summary: null });
  expect(chat.requests).toHaveLength(0);
});
