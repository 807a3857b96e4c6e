// The pipeline strategy's toolFiller: a short phrase said while a slow tool (a knowledge search) runs,
// against the fake providers. Said only once the tool has run longer than afterMs; never in the LLM's history.
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import type { VoiceSession } from "../../src/voice/engine";
import { connectPipelineSession, type PipelineFakes, startPipelineFakes, streamCaller } from "./pipeline-fakes";
import { nextEvent, recordEvents } from "./session-events";

let fakes: PipelineFakes;
const open: { session: VoiceSession; caller: { stop(): void } }[] = [];
beforeAll(async () => (fakes = await startPipelineFakes()));
afterAll(() => fakes.close());
afterEach(() => {
  for (const { session, caller } of open.splice(0)) {
    caller.stop();
    session.close();
  }
});

const filler = "One moment while I look that up.";

/** One turn whose tool answers after `toolMs`; what the agent said and what the LLM was sent next. */
async function turnWithTool(parameters: Record<string, unknown>, toolMs: number) {
  fakes.script([{ userSays: "", reply: { toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] } }]);
  const session = await connectPipelineSession(fakes, parameters);
  const events = recordEvents(session);
  const caller = streamCaller(session);
  open.push({ session, caller });
  const ttsTextsBefore = fakes.tts.streams.flatMap((s) => s.timings.map((t) => t.text));
  const toolCall = nextEvent(session, "toolCall", () => true, 10_000);
  session.sendText("What's the weather in Rome?");
  const [call] = await toolCall;
  await Bun.sleep(toolMs);
  session.submitToolResult(call.callId, "Sunny.");
  await nextEvent(session, "turnDone", () => true, 15_000);
  const spoken = fakes.tts.streams.flatMap((s) => s.timings.map((t) => t.text)).slice(ttsTextsBefore.length);
  return { finals: events.finals("ASSISTANT"), spoken, sent: fakes.llm.requests.at(-1)!.body.messages };
}

test("a tool slower than afterMs: the filler is said while it runs, and stays out of the LLM's history", async () => {
  const { finals, spoken, sent } = await turnWithTool({ toolFiller: { text: filler, afterMs: 200 } }, 1200);
  expect(finals).toEqual([filler, "get_weather: Sunny."]);
  expect(spoken.map((t) => t.trim())).toContain(filler);
  expect(sent.slice(-3).map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "tool"]);
  expect(JSON.stringify(sent)).not.toContain(filler);
}, 30_000);

test("a tool faster than afterMs: no filler", async () => {
  const { finals, spoken } = await turnWithTool({ toolFiller: { text: filler, afterMs: 1500 } }, 100);
  expect(finals).toEqual(["get_weather: Sunny."]);
  expect(spoken.map((t) => t.trim())).not.toContain(filler);
}, 30_000);

test("no toolFiller in the strategy (the default): a slow tool is waited for in silence", async () => {
  const { finals } = await turnWithTool({}, 1200);
  expect(finals).toEqual(["get_weather: Sunny."]);
}, 30_000);
