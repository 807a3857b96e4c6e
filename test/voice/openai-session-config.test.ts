import { expect, test } from "bun:test";
import { audioFormats, buildSessionConfig, realtimeUrl } from "../../src/voice/openai-session-config";
import { parseToolSchema } from "../../src/models/tool-schema";
import { toolWebhooksFromExtensions } from "../../src/voice/tools";

const base = { instructions: "Be brief.", tools: [], sampleRate: 16000 };

test("out-of-range values are clamped rather than making the provider refuse the whole session", () => {
  const session = buildSessionConfig(
    { temperature: 0.2, voice: { voiceId: "alloy", speed: 3 }, vad: { confidenceThreshold: 2 } },
    base,
  );
  expect(session.temperature).toBe(0.6);
  expect(session.speed).toBe(1.5);
  expect(session.turn_detection?.threshold).toBe(1);
});

test("durations are milliseconds, whatever their size (no guessing at seconds)", () => {
  expect(buildSessionConfig({ vad: { backbufferDuration: 3, stopDuration: 800 } }, base).turn_detection).toMatchObject({
    prefix_padding_ms: 3,
    silence_duration_ms: 800,
  });
});

test("8 kHz calls talk G.711 mu-law with the provider; outputSampleRate picks the output format", () => {
  expect(buildSessionConfig({}, { ...base, sampleRate: 8000 })).toMatchObject({
    input_audio_format: "g711_ulaw",
    output_audio_format: "g711_ulaw",
  });
  expect(audioFormats({}, 16000)).toEqual({ input: "pcm16", output: "pcm16" });
  expect(audioFormats({ outputSampleRate: 8000 }, 24000)).toEqual({ input: "pcm16", output: "g711_ulaw" });
  expect(audioFormats({ outputSampleRate: 24000 }, 8000)).toEqual({ input: "g711_ulaw", output: "pcm16" });
});

test("a voice of another TTS provider is not sent; no parameters give the provider's defaults", () => {
  const session = buildSessionConfig({ voice: { provider: "elevenlabs", voiceId: "21m00Tcm4TlvDq8ikWAM" } }, base);
  expect(session).not.toHaveProperty("voice");
  expect(buildSessionConfig({}, base)).toEqual({
    modalities: ["text", "audio"],
    instructions: "Be brief.",
    input_audio_format: "pcm16",
    output_audio_format: "pcm16",
    input_audio_transcription: { model: "whisper-1" },
    turn_detection: { type: "server_vad", create_response: true, interrupt_response: true },
    tools: [expect.objectContaining({ type: "function", name: "end_call" })],
    tool_choice: "auto",
  });
});

test("the URL is the operator's with the strategy's model; a strategy's url is never used", () => {
  expect(realtimeUrl({ model: "m1" }, "wss://x.test/v1/realtime?model=old")).toBe("wss://x.test/v1/realtime?model=m1");
  expect(realtimeUrl({}, "wss://x.test/v1/realtime?model=kept")).toBe("wss://x.test/v1/realtime?model=kept");
  expect(realtimeUrl({ url: "ws://127.0.0.1:9/rt" }, "wss://x.test/")).toBe("wss://x.test/?model=gpt-realtime");
});

test("tool schemas: the API's OpenAI function format only, the extension's name wins, broken extensions skipped", () => {
  const fn = {
    name: "lookup",
    description: "Find it",
    parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  };
  expect(parseToolSchema(JSON.stringify(fn))).toEqual({ ok: true, tool: fn });
  // the chat-completions wrapper is refused by the API, so the call refuses it too
  expect(parseToolSchema(JSON.stringify({ type: "function", function: fn })).ok).toBe(false);
  expect(parseToolSchema("{nope")).toEqual({ ok: false, message: "is not valid JSON" });
  expect(
    toolWebhooksFromExtensions([
      { type: "tool_webhook", parameters: { name: "renamed", serverUrl: "http://t.test", schema: JSON.stringify(fn) } },
    ])[0]?.tool.name,
  ).toBe("renamed");
  const webhooks = toolWebhooksFromExtensions([
    {
      type: "tool_webhook",
      parameters: { name: "lookup", serverUrl: "http://t.test", schema: JSON.stringify(fn), headers: { A: "1" } },
    },
    { type: "tool_webhook", parameters: { name: "broken", serverUrl: "http://t.test", schema: "{" } },
    { type: "tool_webhook", parameters: { name: "end_call", serverUrl: "http://t.test", schema: "{}" } },
    { type: "knowledge_base", parameters: { url: "http://kb.test" } },
  ]);
  expect(webhooks).toEqual([{ tool: fn, serverUrl: "http://t.test", headers: { A: "1" } }]);
});
