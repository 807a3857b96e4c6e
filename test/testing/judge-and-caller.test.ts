// The judge and the simulated caller against a local chat-completions server: what they send, how
// their answers are read, and what a bad or missing answer gives (never a pass).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { judgeCall } from "../../src/testing/judge";
import type { ObservedCall } from "../../src/testing/observed-call";
import { nextCallerMove } from "../../src/testing/simulated-caller";
import { startFakeChatServer, type FakeChatServer } from "../fakes/chat-completions-server";

let chat: FakeChatServer;
let config: ReturnType<typeof loadConfig>;

beforeAll(async () => {
  chat = await startFakeChatServer();
  config = loadConfig({
    ...process.env,
    OPENAI_BASE_URL: chat.baseUrl,
    JUDGE_MODEL: "judge-1",
    SIMULATOR_MODEL: "sim-1",
  });
});
afterAll(() => chat.close());

const call: ObservedCall = {
  utterances: [
    { by: "agent", text: "Luigi's, how can I help?" },
    { by: "caller", text: "A table for two." },
    { by: "agent", text: "Booked for two at seven.", heard: "Booked for two at 7" },
  ],
  toolCalls: [{ tool: "book_table", arguments: { people: 2 }, output: '{"ok":true}', source: "mock" }],
  endedReason: "hangup",
  analysis: null,
  firstAudioMs: null,
};
const questions = [
  { name: "booked", question: "Did the agent book a table?" },
  { name: "polite", question: "Was the agent polite?" },
];
const answer = (criteria: unknown) => ({ content: JSON.stringify({ criteria }) });

describe("the judge", () => {
  test("sees the transcript (heard and intended), the tool calls and the end; its verdicts come back by name", async () => {
    chat.requests.length = 0;
    chat.complete = () =>
      answer([
        { name: "booked", verdict: "pass", reason: "it booked" },
        { name: "polite", verdict: "fail", reason: "curt" },
      ]);
    const verdicts = await judgeCall(config, call, questions);
    expect(verdicts instanceof Map && Object.fromEntries(verdicts)).toEqual({
      booked: { verdict: "pass", reason: "it booked" },
      polite: { verdict: "fail", reason: "curt" },
    });
    const body = chat.requests[0]!.body;
    expect(body.model).toBe("judge-1");
    expect(body.response_format.type).toBe("json_schema");
    const prompt = body.messages[1].content as string;
    expect(prompt).toContain("agent (heard): Booked for two at 7");
    expect(prompt).toContain("agent (intended): Booked for two at seven.");
    expect(prompt).toContain('tool book_table({"people":2}) -> {"ok":true}');
    expect(prompt).toContain("The call ended: hangup");
    expect(prompt).toContain("- polite: Was the agent polite?");
  });

  test("an answer that misses a criterion is asked again once; a second bad one is an error", async () => {
    chat.requests.length = 0;
    let n = 0;
    chat.complete = () =>
      n++ === 0
        ? answer([{ name: "booked", verdict: "pass", reason: "" }])
        : answer([
            { name: "booked", verdict: "pass", reason: "" },
            { name: "polite", verdict: "pass", reason: "" },
          ]);
    expect((await judgeCall(config, call, questions)) instanceof Map).toBe(true);
    expect(chat.requests).toHaveLength(2);
    chat.complete = () => ({ content: "yes, all good" });
    expect(await judgeCall(config, call, questions)).toEqual({
      error: "the judge's answer was not usable (asked twice)",
    });
  });

  test("a provider that is down is an error, not a verdict", async () => {
    chat.complete = null;
    chat.mode = "error";
    const verdicts = await judgeCall(config, call, questions);
    chat.mode = "ok";
    expect(verdicts).toEqual({ error: "chat completions answered 500 (asked twice)" });
  });
});

describe("the simulated caller", () => {
  const persona = { persona: "Hurried.", goal: "Book a table for two.", facts: { name: "Ada" } };

  test("its request carries the persona, the goal, the facts and the whole conversation in order", async () => {
    chat.requests.length = 0;
    chat.complete = () => ({ content: "Seven, please." });
    expect(await nextCallerMove(config, persona, call.utterances)).toEqual({ say: "Seven, please." });
    const body = chat.requests[0]!.body;
    expect(body.model).toBe("sim-1");
    expect(body.tools.map((t: any) => t.function.name)).toEqual(["end_call"]);
    expect(body.messages[0].content).toContain("Book a table for two.");
    expect(body.messages[0].content).toContain("- name: Ada");
    // the agent is the simulator's user; what the caller heard is what it answers
    expect(body.messages.slice(1)).toEqual([
      { role: "user", content: "Luigi's, how can I help?" },
      { role: "assistant", content: "A table for two." },
      { role: "user", content: "Booked for two at 7" },
    ]);
  });

  test("end_call hangs up", async () => {
    chat.complete = () => ({
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "end_call", arguments: "{}" } }],
    });
    expect(await nextCallerMove(config, persona, call.utterances)).toEqual({ endCall: true });
  });
});
