import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { concatPcm, rms } from "../../src/audio/pcm";
import { loadConfig } from "../../src/config";
import { createVoiceSession } from "../../src/voice/create-voice-session";
import {
  UnknownStrategyTypeError,
  VoiceConnectError,
  type ToolCallEvent,
  type VoiceSession,
  type VoiceTool,
} from "../../src/voice/engine";
import {
  type FakeRealtimeOptions,
  type FakeRealtimeServer,
  startFakeRealtimeServer,
} from "../fakes/openai-realtime-server";
import { silence, speech } from "../helpers/speech";
import { frames } from "../audio/signals";
import { nextEvent, recordEvents } from "./session-events";

const weatherTool: VoiceTool = {
  name: "get_weather",
  description: "Current weather in a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string", description: "City name" } },
    required: ["city"],
  },
};

const openSessions: VoiceSession[] = [];
const servers: FakeRealtimeServer[] = [];
afterEach(() => {
  for (const s of openSessions.splice(0)) s.close();
});
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function connect(
  fakeOptions: FakeRealtimeOptions,
  parameters: Record<string, unknown> = {},
  options: { greeting?: string; greetingWaitsForCallee?: boolean; sampleRate?: number } = {},
) {
  const fake = await startFakeRealtimeServer(fakeOptions);
  servers.push(fake);
  const config = loadConfig({ OPENAI_REALTIME_URL: fake.url, OPENAI_API_KEY: "sk-test-key" });
  const session = await createVoiceSession(
    { type: "openai_realtime", parameters },
    {
      instructions: "You are the Acme front desk.",
      greeting: options.greeting ?? null,
      greetingWaitsForCallee: options.greetingWaitsForCallee,
      tools: [weatherTool],
      sampleRate: options.sampleRate ?? 8000,
      config,
    },
  );
  openSessions.push(session);
  return { fake, provider: await fake.nextSession(), session, events: recordEvents(session) };
}

describe("connecting", () => {
  test("strategy parameters, instructions and tools are mapped onto session.update", async () => {
    const parameters = {
      model: "gpt-test-realtime",
      temperature: 0.8,
      voice: { provider: "openai", voiceId: "coral", speed: 1.1 },
      vad: { confidenceThreshold: 0.6, backbufferDuration: 250, stopDuration: 400 },
    };
    const { provider } = await connect({}, parameters);
    expect(provider.request.url).toBe("/v1/realtime?model=gpt-test-realtime");
    expect(provider.request.headers.authorization).toBe("Bearer sk-test-key");
    expect(provider.request.headers["openai-beta"]).toBe("realtime=v1");
    const { session } = await provider.waitFor("session.update");
    expect(session).toMatchObject({
      instructions: "You are the Acme front desk.",
      temperature: 0.8,
      voice: "coral",
      speed: 1.1,
      input_audio_format: "g711_ulaw",
      output_audio_format: "g711_ulaw",
      turn_detection: { type: "server_vad", threshold: 0.6, prefix_padding_ms: 250, silence_duration_ms: 400 },
    });
    expect(session.tools.map((t: { name: string }) => t.name)).toEqual(["get_weather", "end_call"]);
    expect(session.tools[0]).toEqual({ type: "function", ...weatherTool });
  });

  test("the agent speaks the greeting first, at the call's rate", async () => {
    const { provider, events, session } = await connect(
      {},
      {},
      { greeting: "Hello, thanks for calling Acme!", sampleRate: 16000 },
    );
    await provider.waitFor("response.create");
    expect(provider.received.map((e) => e.type)).toEqual(["session.update", "response.create"]);
    expect(provider.received[1]!.response.instructions).toContain("Hello, thanks for calling Acme!");
    await nextEvent(session, "turnDone");
    expect(events.finals("ASSISTANT")[0]).toContain("Hello, thanks for calling Acme!");
    // the fake speaks 12 ms of 24 kHz tone per character; we get it at 16 kHz
    const expected = Math.round((provider.received[1]!.response.instructions.length * 12 * 16000) / 1000);
    expect(Math.abs(events.audioSamples() - expected)).toBeLessThanOrEqual(2);
  });

  test("an unknown strategy type is refused with a named error", async () => {
    const config = loadConfig({});
    const attempt = createVoiceSession(
      { type: "magic_llm", parameters: {} },
      { instructions: "", greeting: null, tools: [], sampleRate: 8000, config },
    );
    await expect(attempt).rejects.toBeInstanceOf(UnknownStrategyTypeError);
    await expect(attempt).rejects.toThrow('unknown LLM generation strategy type "magic_llm"');
  });

  test("an unreachable provider is a VoiceConnectError, not a hang", async () => {
    const config = loadConfig({ OPENAI_REALTIME_URL: "ws://127.0.0.1:9/v1/realtime" });
    const attempt = createVoiceSession(
      { type: "openai_realtime", parameters: {} },
      { instructions: "", greeting: null, tools: [], sampleRate: 8000, config },
    );
    await expect(attempt).rejects.toBeInstanceOf(VoiceConnectError);
  });
});

describe("conversation", () => {
  test("a spoken caller turn gives both transcripts and the agent's reply audio at the call's rate", async () => {
    const reply = await speech("We are open from nine to five.", 24000);
    const caller = await speech("What are your opening hours?", 8000);
    const { provider, events, session } = await connect(
      {
        turns: [
          { userSays: "What are your opening hours?", reply: { text: "We are open from nine to five.", audio: reply } },
        ],
      },
      { vad: { stopDuration: 300 } },
    );
    const done = nextEvent(session, "turnDone");
    for (const frame of frames(concatPcm([caller, silence(500, 8000)]), [160])) session.sendAudio(frame);
    await done;
    expect(events.interrupts).toBe(1); // speech_started: the bridge flushes queued agent audio
    expect(events.finals("USER")).toEqual(["What are your opening hours?"]);
    expect(events.finals("ASSISTANT")).toEqual(["We are open from nine to five."]);
    expect(events.transcripts.some((t) => t.role === "ASSISTANT" && !t.final)).toBe(true);
    // an 8 kHz call's audio reached the provider as G.711 mu-law at 8 kHz, not resampled
    expect(provider.session.input_audio_format).toBe("g711_ulaw");
    // in 100 ms appends (800 mu-law bytes), not one per 20 ms frame; all of it but the last part of one
    const appends = provider.received.filter((e) => e.type === "input_audio_buffer.append");
    expect(appends.length).toBeGreaterThan(10);
    expect(appends.every((e) => Math.abs(e.bytes - 800) <= 2)).toBe(true); // (counted from the base64)
    expect(Math.abs(provider.audioBytesReceived - (caller.length + 4000) * 2)).toBeLessThanOrEqual(2 * 800);
    const out = concatPcm(events.audio);
    expect(Math.abs(out.length - reply.length / 3)).toBeLessThanOrEqual(2);
    expect(rms(out) / rms(reply)).toBeGreaterThan(0.7); // same speech, band-limited to 4 kHz
  });

  test("outputSampleRate 24000 asks for pcm16 (24 kHz) output; GA event names are understood", async () => {
    const audio = new Int16Array(4800).fill(1000);
    const { events, session, provider } = await connect(
      { naming: "ga", turns: [{ userSays: "hi", reply: { text: "Hi there.", audio } }] },
      { outputSampleRate: 24000 },
      { sampleRate: 16000 },
    );
    const done = nextEvent(session, "turnDone");
    session.sendText("hi");
    await done;
    expect(events.finals("ASSISTANT")).toEqual(["Hi there."]);
    expect(provider.session.output_audio_format).toBe("pcm16");
    expect(Math.abs(events.audioSamples() - 3200)).toBeLessThanOrEqual(1); // 200 ms at the call's 16 kHz
  });

  test("a greeting that waits for the callee answers their first turn, once; the provider answers the next", async () => {
    const hello = await speech("Hello?", 8000);
    const { provider, events, session } = await connect(
      {
        turns: [{ userSays: "Hello?", reply: { text: "It is Acme." } }],
        onInstructions: () => ({ text: "Hi Ada, Acme here." }),
      },
      { vad: { stopDuration: 300 } },
      { greeting: "Hi Ada, Acme here.", greetingWaitsForCallee: true },
    );
    // the provider does not answer turns itself until the greeting is out, and it is not out yet
    expect((await provider.waitFor("session.update")).session.turn_detection.create_response).toBe(false);
    const greeted = nextEvent(session, "turnDone");
    for (const frame of frames(concatPcm([hello, silence(500, 8000)]), [160])) session.sendAudio(frame);
    await greeted;
    expect(events.finals("ASSISTANT")).toEqual(["Hi Ada, Acme here."]);
    const responses = () => provider.received.filter((e) => e.type === "response.create");
    expect(responses().map((e) => e.response?.instructions)).toEqual([expect.stringContaining("Hi Ada, Acme here.")]);
    expect((await provider.waitFor("session.update")).session.turn_detection.create_response).toBe(true);
    session.greetIfWaiting(); // the silence timer, late: the greeting was spoken already
    const answered = nextEvent(session, "turnDone");
    for (const frame of frames(concatPcm([hello, silence(500, 8000)]), [160])) session.sendAudio(frame);
    await answered;
    expect(events.finals("ASSISTANT")).toEqual(["Hi Ada, Acme here.", "It is Acme."]);
    expect(responses()).toHaveLength(1);
  });

  test("a tool call round trip: the result goes back and the agent answers from it", async () => {
    const { provider, events, session } = await connect({
      turns: [
        {
          userSays: "Weather in Paris?",
          reply: { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
        },
      ],
    });
    session.sendText("Weather in Paris?");
    const [call] = await nextEvent(session, "toolCall");
    expect(call).toMatchObject({ name: "get_weather", arguments: { city: "Paris" } });
    const answered = nextEvent(session, "transcript", (t) => t.final && t.role === "ASSISTANT");
    session.submitToolResult(call.callId, '{"sky":"sunny","celsius":21}');
    expect((await answered)[0].text).toBe('get_weather: {"sky":"sunny","celsius":21}');
    expect(provider.toolOutputs).toEqual([
      { callId: call.callId, name: "get_weather", output: '{"sky":"sunny","celsius":21}' },
    ]);
    expect(provider.received.filter((e) => e.type === "response.create")).toHaveLength(2); // the text turn + the follow-up
    expect(events.errors).toEqual([]);
  });

  test("two tool calls in flight each get their own answer, then exactly one response.create", async () => {
    const calls = [
      { name: "get_weather", arguments: { city: "Paris" } },
      { name: "get_weather", arguments: { city: "Rome" } },
    ];
    const { provider, events, session } = await connect({
      turns: [{ userSays: "Paris and Rome?", reply: { toolCalls: calls } }],
    });
    const turn = nextEvent(session, "turnDone");
    session.sendText("Paris and Rome?");
    await turn;
    expect(events.toolCalls.map((c) => c.arguments.city)).toEqual(["Paris", "Rome"]);
    const [paris, rome] = events.toolCalls as [ToolCallEvent, ToolCallEvent];
    session.submitToolResult(rome.callId, "Rome: rain");
    await provider.waitFor("conversation.item.create"); // the text message
    await provider.waitFor("conversation.item.create"); // Rome's output
    await Bun.sleep(50);
    expect(provider.received.filter((e) => e.type === "response.create")).toHaveLength(1); // still waiting for Paris
    const answered = nextEvent(session, "transcript", (t) => t.final && t.role === "ASSISTANT");
    session.submitToolResult(paris.callId, "Paris: sun");
    expect((await answered)[0].text).toBe("get_weather: Rome: rain; get_weather: Paris: sun");
    expect(provider.received.filter((e) => e.type === "response.create")).toHaveLength(2);
    const outputs = Object.fromEntries(provider.toolOutputs.map((o) => [o.callId, o.output]));
    expect(outputs).toEqual({ [rome.callId]: "Rome: rain", [paris.callId]: "Paris: sun" });
  });

  test("end_call: the agent says goodbye and asks to hang up; no further response is requested", async () => {
    const { provider, events, session } = await connect({
      turns: [
        {
          userSays: "bye",
          reply: { text: "Goodbye!", toolCalls: [{ name: "end_call", arguments: { reason: "caller said bye" } }] },
        },
      ],
    });
    const turn = nextEvent(session, "turnDone");
    session.sendText("bye");
    expect((await nextEvent(session, "endCall"))[0]).toEqual({ reason: "caller said bye" });
    await turn;
    await Bun.sleep(50);
    expect(events.finals("ASSISTANT")).toEqual(["Goodbye!"]);
    expect(events.toolCalls).toEqual([]);
    expect(provider.toolOutputs.map((o) => o.name)).toEqual(["end_call"]);
    expect(provider.received.filter((e) => e.type === "response.create")).toHaveLength(1);
  });

  test("barge-in: caller speech during the agent's reply interrupts it", async () => {
    const { events, session } = await connect(
      { realtime: true, chunkMs: 40 },
      {},
      { greeting: "This greeting is long enough to still be playing when the caller talks over it." },
    );
    await nextEvent(session, "audio");
    const interrupted = nextEvent(session, "interrupt");
    session.sendAudio(new Int16Array(1600).map((_, i) => (i % 16 < 8 ? 8000 : -8000)));
    await interrupted;
    await nextEvent(session, "turnDone");
    const expectedFull = Math.round((120 * 12 * 8000) / 1000);
    expect(events.audioSamples()).toBeLessThan(expectedFull / 2);
    expect(events.finals("ASSISTANT")).toEqual([]); // the cancelled reply never completed
  });
});

describe("ending", () => {
  test("the provider dropping the connection gives an error and closed, once", async () => {
    const { provider, events, session } = await connect({});
    const closed = nextEvent(session, "closed");
    provider.drop();
    expect((await closed)[0].reason).toContain("provider disconnected");
    expect(events.errors.map((e) => e.message)).toEqual([events.closed[0]!]);
    session.sendAudio(new Int16Array(160)); // ignored, no throw
    session.close();
    expect(events.closed).toHaveLength(1);
  });

  test("close() ends the session quietly", async () => {
    const { events, session } = await connect({});
    const closed = nextEvent(session, "closed");
    session.close();
    expect((await closed)[0]).toEqual({ reason: "closed" });
    expect(events.errors).toEqual([]);
  });
});
