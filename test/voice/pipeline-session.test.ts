// The pipeline engine against fakes of Deepgram, ElevenLabs and chat completions: greeting, turns,
// tool calls, barge-in, and providers that refuse, drop or stall.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import type { VoiceSession } from "../../src/voice/engine";
import { VoiceConnectError } from "../../src/voice/engine";
import { scriptedReplies } from "../fakes/chat-completions-server";
import { speech } from "../helpers/speech";
import {
  connectPipelineSession,
  keys,
  type PipelineFakes,
  type SessionOptions,
  startPipelineFakes,
  streamCaller,
} from "./pipeline-fakes";
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

async function start(parameters: Record<string, unknown> = {}, options: SessionOptions = {}) {
  const session = await connectPipelineSession(fakes, parameters, options);
  const events = recordEvents(session);
  const caller = streamCaller(session);
  open.push({ session, caller });
  return { session, events, caller };
}

describe("a conversation", () => {
  test("greeting, a turn with a tool call, the model continuing with the result", async () => {
    fakes.script([
      {
        userSays: "What's the weather in Rome?",
        reply: { text: "Let me look.", toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
      },
    ]);
    const { session, events, caller } = await start({ vad: { stopDuration: 300 } }, { greeting: "Hello, Acme here." });
    await nextEvent(session, "transcript", (t) => t.final && t.role === "ASSISTANT", 10_000);
    expect(events.finals("ASSISTANT")).toEqual(["Hello, Acme here."]);
    expect(events.audioSamples()).toBeGreaterThan(8000 * 0.5);

    const toolCall = nextEvent(session, "toolCall", () => true, 15_000);
    await caller.say(await speech("What's the weather in Rome?", 8000));
    const [call] = await toolCall;
    expect(call).toEqual({ callId: expect.any(String), name: "get_weather", arguments: { city: "Rome" } });
    session.submitToolResult(call.callId, "Sunny, 24 degrees.");
    await nextEvent(
      session,
      "transcript",
      (t) => t.final && t.role === "ASSISTANT" && t.text.startsWith("get_weather"),
      15_000,
    );
    expect(events.finals("USER")).toEqual(["What's the weather in Rome?"]);
    expect(events.finals("ASSISTANT")).toEqual([
      "Hello, Acme here.",
      "Let me look.",
      "get_weather: Sunny, 24 degrees.",
    ]);

    const [first, second, third] = fakes.llm.requests.filter((r) => r.body?.stream);
    expect(first!.body.messages).toEqual([
      { role: "system", content: "You are the Acme front desk." },
      { role: "assistant", content: "Hello, Acme here." },
      { role: "user", content: "What's the weather in Rome?" },
    ]);
    expect(first!.body.tools.map((t: any) => t.function.name)).toEqual(["get_weather", "end_call"]);
    expect(first!.headers.authorization).toBe(`Bearer ${keys.OPENAI_API_KEY}`);
    expect(second!.body.messages.slice(-2)).toEqual([
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [
          { id: call.callId, type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: call.callId, content: "Sunny, 24 degrees." },
    ]);
    expect(third).toBeUndefined();
  }, 40_000);
});

describe("a conversation, continued", () => {
  test("a greeting that waits for the callee answers their first turn instead of the model, once; the next turn is the model's", async () => {
    // two caller turns, one model reply: the first turn's answer is the greeting
    fakes.stt.transcripts.splice(0, fakes.stt.transcripts.length, "Hello?", "Who is this?");
    fakes.llm.reply = scriptedReplies([{ text: "It is Acme." }]);
    const { session, events, caller } = await start(
      { vad: { stopDuration: 300 } },
      { greeting: "Hi Ada, Acme here.", greetingWaitsForCallee: true },
    );
    const before = fakes.llm.requests.length;
    const greeted = nextEvent(session, "turnDone", () => true, 15_000);
    await caller.say(await speech("Hello?", 8000));
    await greeted;
    expect(events.finals("USER")).toEqual(["Hello?"]);
    expect(events.finals("ASSISTANT")).toEqual(["Hi Ada, Acme here."]);
    session.greetIfWaiting(); // the silence timer, late: the greeting was spoken already
    const answered = nextEvent(session, "turnDone", () => true, 15_000);
    await caller.say(await speech("Who is this?", 8000));
    await answered;
    expect(events.finals("ASSISTANT")).toEqual(["Hi Ada, Acme here.", "It is Acme."]);
    expect(fakes.llm.requests.length - before).toBe(1);
    expect(fakes.llm.requests.at(-1)!.body.messages.slice(1)).toEqual([
      { role: "user", content: "Hello?" },
      { role: "assistant", content: "Hi Ada, Acme here." },
      { role: "user", content: "Who is this?" },
    ]);
  }, 30_000);

  test("end_call: the agent says goodbye, the session asks to hang up, and the model is not asked again", async () => {
    fakes.script([
      {
        userSays: "Bye now.",
        reply: { text: "Goodbye!", toolCalls: [{ name: "end_call", arguments: { reason: "caller is done" } }] },
      },
    ]);
    const { session, events, caller } = await start({ vad: { stopDuration: 300 } });
    const before = fakes.llm.requests.length;
    const endCall = nextEvent(session, "endCall", () => true, 15_000);
    await caller.say(await speech("Bye now.", 8000));
    expect((await endCall)[0]).toEqual({ reason: "caller is done" });
    await nextEvent(session, "turnDone", () => true, 10_000);
    expect(events.finals("ASSISTANT")).toEqual(["Goodbye!"]);
    await Bun.sleep(300);
    expect(fakes.llm.requests.length - before).toBe(1);
    const last = fakes.llm.requests.at(-1)!.body.messages;
    expect(last.at(-1)).toEqual({ role: "user", content: "Bye now." });
  }, 30_000);

  test("two tool calls in one response run at once; both results go back, in the model's order", async () => {
    fakes.script([
      {
        userSays: "",
        reply: {
          toolCalls: [
            { name: "get_weather", arguments: { city: "Rome" } },
            { name: "get_weather", arguments: { city: "Oslo" } },
          ],
        },
      },
    ]);
    const { session, events } = await start();
    const before = fakes.llm.requests.length;
    const calls: { callId: string; arguments: Record<string, unknown> }[] = [];
    session.on("toolCall", (call) => calls.push(call));
    session.sendText("Weather in Rome and Oslo?");
    while (calls.length < 2) await Bun.sleep(20);
    expect(calls.map((c) => c.arguments)).toEqual([{ city: "Rome" }, { city: "Oslo" }]);
    // answered in reverse order: the model continues only once both are in
    session.submitToolResult(calls[1]!.callId, "Snow.");
    await Bun.sleep(200);
    expect(fakes.llm.requests.length - before).toBe(1);
    session.submitToolResult(calls[0]!.callId, "Sun.");
    await nextEvent(session, "turnDone", () => true, 10_000);
    const second = fakes.llm.requests.at(-1)!.body.messages;
    expect(second.slice(-2)).toEqual([
      { role: "tool", tool_call_id: calls[0]!.callId, content: "Sun." },
      { role: "tool", tool_call_id: calls[1]!.callId, content: "Snow." },
    ]);
    expect(events.finals("ASSISTANT")).toEqual(["get_weather: Sun.; get_weather: Snow."]);
  }, 20_000);

  test("a text message (keypad digits) is a user turn the agent answers", async () => {
    fakes.script([]);
    const { session, events } = await start();
    session.sendText("The caller pressed 1 on the keypad.");
    await nextEvent(session, "turnDone", () => true, 10_000);
    expect(events.finals("ASSISTANT")).toEqual(["You said: The caller pressed 1 on the keypad."]);
  }, 20_000);
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
  for (let i = 0; i + frame <= samples.length; i += frame)
    if (rms(samples.subarray(i, i + frame)) > 300) return (i * 1000) / rate;
  return 0;
}

describe("barge-in", () => {
  test("caller speech stops the agent within 200 ms; the agent's message is what was heard", async () => {
    const greeting =
      "Thank you for calling Acme. Our opening hours are nine to five on weekdays, and ten to two on Saturdays. How can I help you today?";
    fakes.script([{ userSays: "Stop please.", reply: { text: "Sure." } }]);
    const { session, events, caller } = await start({ vad: { startDuration: 64, stopDuration: 300 } }, { greeting });
    await nextEvent(session, "audio", () => true, 10_000);
    await Bun.sleep(1500); // a second and a half of the greeting has played
    // measured on the caller's stream: how much of its speech had been sent when the agent stopped
    const interrupted = nextEvent(session, "interrupt", () => true, 5_000).then(() => caller.sentMs());
    const said = await speech("Stop please.", 8000);
    await caller.say(said);
    const latency = (await interrupted) - (caller.speechStartsAtMs() + onsetMs(said, 8000));
    expect(latency).toBeGreaterThan(0);
    expect(latency).toBeLessThan(200);
    const heard = events.finals("ASSISTANT")[0]!;
    expect(greeting.startsWith(heard)).toBe(true);
    // about 1.5 s of speech: more than a word or two, far less than the whole greeting
    expect(heard.length).toBeGreaterThan(10);
    expect(heard.length).toBeLessThan(greeting.length / 2);
    await nextEvent(session, "transcript", (t) => t.final && t.role === "ASSISTANT" && t.text === "Sure.", 10_000);
    const request = fakes.llm.requests.filter((r) => r.body?.stream).at(-1)!;
    expect(request.body.messages.slice(1)).toEqual([
      { role: "assistant", content: heard },
      { role: "user", content: "Stop please." },
    ]);
    // the greeting's TTS stream was cut off
    expect(fakes.tts.streams.some((s) => s.spoken.includes(greeting) && s.closedByClient)).toBe(true);
  }, 30_000);
});

describe("providers failing mid-call", () => {
  test("STT dropping the connection ends the session with the reason", async () => {
    const { session } = await start();
    const closed = nextEvent(session, "closed", () => true, 5_000);
    fakes.stt.streams.at(-1)!.drop();
    expect((await closed)[0].reason).toMatch(/^speech-to-text provider closed the stream \(code 1006/);
  });

  test("the LLM answering 500 ends the session with the status", async () => {
    fakes.llm.mode = "error";
    const { session } = await start();
    const closed = nextEvent(session, "closed", () => true, 5_000);
    session.sendText("Hello?");
    expect((await closed)[0].reason).toBe('LLM provider answered HTTP 500: {"error":{"message":"boom"}}');
  });

  test("an LLM that never answers, and a TTS that never speaks, end the session after PROVIDER_STALL_MS", async () => {
    fakes.llm.mode = "hang";
    const env = { PROVIDER_STALL_MS: "800" };
    const llmStalled = await start({}, { env });
    const closedLlm = nextEvent(llmStalled.session, "closed", () => true, 5_000);
    llmStalled.session.sendText("Hello?");
    expect((await closedLlm)[0].reason).toBe("LLM provider sent nothing for 800 ms");

    fakes.tts.mode = "stall";
    const ttsStalled = await start({}, { env, greeting: "Hello there, this is Acme." });
    const closedTts = await nextEvent(ttsStalled.session, "closed", () => true, 5_000);
    expect(closedTts[0].reason).toBe("text-to-speech provider sent no audio for 800 ms");
    // the provider was told the text; it just never answered
    const told = fakes.tts.streams.flatMap((s) => s.messages).filter((m) => m.text?.includes("this is Acme"));
    expect(told).toEqual([{ text: "Hello there, this is Acme. ", flush: true }]);
  }, 20_000);
});
