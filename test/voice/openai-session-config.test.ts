import { expect, test } from "bun:test";
import { buildSessionConfig, outputRateOf, realtimeUrl } from "../../src/voice/openai-session-config";
import { parseToolSchema } from "../../src/models/tool-schema";
import { toolWebhooksFromExtensions } from "../../src/voice/tools";

const base = { instructions: "Be brief.", tools: [] };

test("out-of-range values are clamped rather than making the provider refuse the whole session", () => {
  const session = buildSessionConfig({ temperature: 0.2, voice: { voiceId: "alloy", speed: 3 }, vad: { confidenceThreshold: 2 } }, base);
  expect(session.temperature).toBe(0.6);
  expect(session.speed).toBe(1.5);
  expect(session.turn_detection.threshold).toBe(1);
});

test("durations in seconds or milliseconds both become milliseconds", () => {
  expect(buildSessionConfig({ vad: { backbufferDuration: 0.3, stopDuration: 800 } }, base).turn_detection).toMatchObject({
    prefix_padding_ms: 300,
    silence_duration_ms: 800,
  });
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

test("the URL carries the model; outputSampleRate must be a positive integer", () => {
  expect(realtimeUrl({ model: "m1" }, "wss://x.test/v1/realtime?model=old")).toBe("wss://x.test/v1/realtime?model=m1");
  expect(realtimeUrl({}, "wss://x.test/v1/realtime?model=kept")).toBe("wss://x.test/v1/realtime?model=kept");
  expect(realtimeUrl({ url: "ws://127.0.0.1:9/rt" }, "wss://x.test/")).toBe("ws://127.0.0.1:9/rt?model=gpt-realtime");
  expect([outputRateOf({ outputSampleRate: 16000 }), outputRateOf({ outputSampleRate: "x" }), outputRateOf({})]).toEqual([16000, 24000, 24000]);
});

test("tool schemas: the API's OpenAI function format only, the extension's name wins, broken extensions skipped", () => {
  const fn = { name: "lookup", description: "Find it", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } };
  expect(parseToolSchema(JSON.stringify(fn))).toEqual({ ok: true, tool: fn });
  // the chat-completions wrapper is refused by the API, so the call refuses it too
  expect(parseToolSchema(JSON.stringify({ type: "function", function: fn })).ok).toBe(false);
  expect(parseToolSchema("{nope")).toEqual({ ok: false, message: "is not valid JSON" });
  expect(toolWebhooksFromExtensions([{ type: "tool_webhook", parameters: { name: "renamed", serverUrl: "http://t.test", schema: JSON.stringify(fn) } }])[0]?.tool.name).toBe("renamed");
  const webhooks = toolWebhooksFromExtensions([
    { type: "tool_webhook", parameters: { name: "lookup", serverUrl: "http://t.test", schema: JSON.stringify(fn), headers: { A: "1" } } },
    { type: "tool_webhook", parameters: { name: "broken", serverUrl: "http://t.test", schema: "{" } },
    { type: "tool_webhook", parameters: { name: "end_call", serverUrl: "http://t.test", schema: "{}" } },
    { type: "knowledge_base", parameters: { url: "http://kb.test" } },
  ]);
  expect(webhooks).toEqual([{ tool: fn, serverUrl: "http://t.test", headers: { A: "1" } }]);
});
