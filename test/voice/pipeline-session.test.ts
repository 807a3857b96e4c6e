// The pipeline engine against fakes of Deepgram, ElevenLabs and chat completions: greeting, turns,
// tool calls, barge-in, and providers that refuse, drop or stall.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import type { VoiceSession } from "../../src/voice/engine";
import { VoiceConnectError } from "../../src/voice/engine";
import { silence, speech } from "../helpers/speech";
import { connectPipelineSession, keys, type PipelineFakes, startPipelineFakes, streamCaller } from "./pipeline-fakes";
import { nextEvent, recordEvents } from "./session-events";

let fakes: PipelineFakes;
const open: { session: VoiceSession; caller?: { stop(): void } }[] = [];
beforeAll(async () => (fakes = await startPipelineFakes()));
afterAll(() => fakes.close());
afterEach(() => {
  for (const { session, caller } of open.splice(0)) {
    caller?.stop();
    session.close();
  }
  fakes.stt.mode = "ok";
  fakes.tts.mode = "ok";
  fakes.llm.mode = "ok";
});

async function start(parameters: Record<string, unknown> = {}, options: { greeting?: string; sampleRate?: number } = {}) {
  const session = await connectPipelineSession(fakes, parameters, options);
  const events = recordEvents(session);
  const caller = streamCaller(session);
  open.push({ session, caller });
  return { session, events, caller };
}

describe("a conversation", () => {
  test("greeting, a turn with a tool call, the model continuing with the result", async () => {
    fakes.script([{ userSays: "What's the weather in Rome?", reply: { text: "Let me look.", toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] } }]);
    const { session, events, caller } = await start({ vad: { stopDuration: 300 } }, { greeting: "Hello, Acme here." });
    await nextEvent(session, "transcript", (t) => t.final && t.role === "ASSISTANT", 10_000);
    expect(events.finals("ASSISTANT")).toEqual(["Hello, Acme here."]);
    expect(events.audioSamples()).toBeGreaterThan(8000 * 0.5);

    const toolCall = nextEvent(session, "toolCall", () => true, 15_000);
    await caller.say(await speech("What's the weather in Rome?", 8000));
    const [call] = await toolCall;
    expect(call).toEqual({ callId: expect.any(String), name: "get_weather", arguments: { city: "Rome" } });
    session.submitToolResult(call.callId, "Sunny, 24 degrees.");
    await nextEvent(session, "transcript", (t) => t.final && t.role === "ASSISTANT" && t.text.startsWith("get_weather"), 15_000);
    expect(events.finals("USER")).toEqual(["What's the weather in Rome?"]);
    expect(events.finals("ASSISTANT")).toEqual(["Hello, Acme here.", "Let me look.", "get_weather: Sunny, 24 degrees."]);

    const [first, second, third] = fakes.llm.requests.filter((r) => r.body?.stream);
    expect(first!.body.messages).toEqual([
      { role: "system", content: "You are the Acme front desk." },
      { role: "assistant", content: "Hello, Acme here." },
      { role: "user", content: "What's the weather in Rome?" },
    ]);
    expect(first!.body.tools.map((t: any) => t.function.name)).toEqual(["get_weather", "end_call"]);
    expect(first!.headers.authorization).toBe(`Bearer ${keys.OPENAI_API_KEY}`);
    expect(second!.body.messages.slice(-2)).toEqual([
      { role: "assistant", content: "Let me look.", tool_calls: [{ id: call.callId, type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }] },
      { role: "tool", tool_call_id: call.callId, content: "Sunny, 24 degrees." },
    ]);
    expect(third).toBeUndefined();
  }, 40_000);
});

describe("providers failing", () => {
  test("a refusing STT or TTS fails the connect with the provider's answer", async () => {
    fakes.stt.mode = "refuse";
    expect(connectPipelineSession(fakes)).rejects.toThrow(VoiceConnectError);
    expect(connectPipelineSession(fakes)).rejects.toThrow(/^speech-to-text provider/);
    fakes.stt.mode = "ok";
    fakes.tts.mode = "refuse";
    expect(connectPipelineSession(fakes)).rejects.toThrow(/^text-to-speech provider/);
  });
});

/** Where the voice starts in espeak's output (it leads with a little quiet), in ms. */
function onsetMs(samples: Int16Array, rate: number) {
  const frame = rate / 100;
  for (let i = 0; i + frame <= samples.length; i += frame) if (rms(samples.subarray(i, i + frame)) > 300) return (i * 1000) / rate;
  return 0;
}

describe("barge-in", () => {
  test("caller speech stops the agent within 200 ms; the agent's message is what was heard", async () => {
    const greeting = "Thank you for calling Acme. Our opening hours are nine to five on weekdays, and ten to two on Saturdays. How can I help you today?";
    fakes.script([{ userSays: "Stop please.", reply: { text: "Sure." } }]);
    const { session, events, caller } = await start({ vad: { startDuration: 64, stopDuration: 300 } }, { greeting });
    await nextEvent(session, "audio", () => true, 10_000);
    await Bun.sleep(1500); // a second and a half of the greeting has played
    const interrupted = nextEvent(session, "interrupt", () => true, 5_000).then(() => performance.now());
    const said = await speech("Stop please.", 8000);
    const sentAt = await caller.say(said);
    const latency = (await interrupted) - (sentAt + onsetMs(said, 8000));
    expect(latency).toBeLessThan(200);
    const heard = events.finals("ASSISTANT")[0]!;
    expect(greeting.startsWith(heard)).toBe(true);
    // about 1.5 s of speech: more than a word or two, far less than the whole greeting
    expect(heard.length).toBeGreaterThan(10);
    expect(heard.length).toBeLessThan(greeting.length / 2);
    await nextEvent(session, "transcript", (t) => t.final && t.role === "ASSISTANT" && t.text === "Sure.", 10_000);
    const request = fakes.llm.requests.filter((r) => r.body?.stream).at(-1)!;
    expect(request.body.messages.slice(1)).toEqual([{ role: "assistant", content: heard }, { role: "user", content: "Stop please." }]);
    // the greeting's TTS stream was cut off
    expect(fakes.tts.streams.some((s) => s.spoken.includes(greeting) && s.closedByClient)).toBe(true);
  }, 30_000);
});
