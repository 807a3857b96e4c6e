// Every pipeline strategy parameter reaches the provider field it maps to (docs/voice.md has the same
// table), checked on what the fake providers were sent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { pipelineSettings, vadDefaults } from "../../src/voice/pipeline/pipeline-settings";
import { connectPipelineSession, keys, type PipelineFakes, startPipelineFakes } from "./pipeline-fakes";
import { nextEvent } from "./session-events";

let fakes: PipelineFakes;
beforeAll(async () => (fakes = await startPipelineFakes()));
afterAll(() => fakes.close());

/** Connects with `parameters`, lets the agent answer one text turn, and returns what each provider got. */
async function sent(parameters: Record<string, unknown>, sampleRate = 8000) {
  const before = { stt: fakes.stt.streams.length, tts: fakes.tts.streams.length, llm: fakes.llm.requests.length };
  const session = await connectPipelineSession(fakes, parameters, { sampleRate });
  session.sendAudio(new Int16Array(sampleRate / 50)); // the call is live: agent audio plays
  session.sendText("Hi.");
  await nextEvent(session, "turnDone", () => true, 10_000);
  session.close();
  const stt = fakes.stt.streams[before.stt]!;
  const tts = fakes.tts.streams[before.tts]!;
  const llm = fakes.llm.requests[before.llm]!;
  return { stt: { query: Object.fromEntries(stt.query), headers: stt.request.headers }, tts, llm };
}

describe("parameter -> provider field", () => {
  test("a strategy with every parameter set", async () => {
    const { stt, tts, llm } = await sent({
      temperature: 0.7,
      outputSampleRate: 16000,
      voice: {
        provider: "elevenlabs",
        voiceId: "voice-abc",
        modelId: "eleven_turbo_v2_5",
        speed: 1.1,
        stability: 0.3,
        similarityBoost: 0.9,
        style: 0.2,
        useSpeakerBoost: false,
      },
      llm: { model: "gpt-strategy-model" },
      stt: { model: "nova-2-phonecall", language: "de" },
    });
    const rows: [string, unknown, unknown][] = [
      ["stt.model -> Deepgram model", stt.query.model, "nova-2-phonecall"],
      ["stt.language -> Deepgram language", stt.query.language, "de"],
      ["8 kHz call -> Deepgram mulaw", stt.query.encoding, "mulaw"],
      ["call rate -> Deepgram sample_rate", stt.query.sample_rate, "8000"],
      ["Deepgram interim_results", stt.query.interim_results, "true"],
      ["DEEPGRAM_API_KEY -> Authorization: Token", stt.headers.authorization, `Token ${keys.DEEPGRAM_API_KEY}`],
      ["voice.voiceId -> ElevenLabs path", tts.voiceId, "voice-abc"],
      ["voice.modelId -> ElevenLabs model_id", tts.query.get("model_id"), "eleven_turbo_v2_5"],
      ["outputSampleRate -> ElevenLabs output_format", tts.query.get("output_format"), "pcm_16000"],
      ["ELEVENLABS_API_KEY -> xi-api-key", tts.request.headers["xi-api-key"], keys.ELEVENLABS_API_KEY],
      [
        "voice settings -> ElevenLabs voice_settings",
        tts.init?.voice_settings,
        { stability: 0.3, similarity_boost: 0.9, style: 0.2, use_speaker_boost: false, speed: 1.1 },
      ],
      ["ElevenLabs init text", tts.init?.text, " "],
      ["llm.model -> chat model", llm.body.model, "gpt-strategy-model"],
      ["temperature -> chat temperature", llm.body.temperature, 0.7],
      ["chat stream", llm.body.stream, true],
      ["OPENAI_API_KEY -> Authorization: Bearer", llm.headers.authorization, `Bearer ${keys.OPENAI_API_KEY}`],
    ];
    for (const [what, actual, expected] of rows) expect({ what, value: actual }).toEqual({ what, value: expected });
  }, 20_000);

  test("defaults: an empty strategy, at 8 and 16 kHz", async () => {
    const narrow = await sent({}, 8000);
    expect(narrow.stt.query).toMatchObject({ model: "nova-3", encoding: "mulaw", sample_rate: "8000" });
    expect(narrow.stt.query.language).toBeUndefined();
    expect(narrow.tts.voiceId).toBe("21m00Tcm4TlvDq8ikWAM");
    expect(narrow.tts.query.get("model_id")).toBe("eleven_flash_v2_5");
    expect(narrow.tts.query.get("output_format")).toBe("ulaw_8000");
    expect(narrow.tts.init).toEqual({ text: " " }); // no voice_settings: the voice's own
    expect(narrow.llm.body.model).toBe("gpt-test-mini"); // PIPELINE_LLM_MODEL
    expect(narrow.llm.body.temperature).toBeUndefined();
    const wide = await sent({}, 16000);
    expect(wide.stt.query).toMatchObject({ encoding: "linear16", sample_rate: "16000" });
    expect(wide.tts.query.get("output_format")).toBe("pcm_16000");
    // 24 kHz calls: the VAD and STT hear 16 kHz, the voice comes at the call's rate
    const full = await sent({}, 24000);
    expect(full.stt.query).toMatchObject({ encoding: "linear16", sample_rate: "16000" });
    expect(full.tts.query.get("output_format")).toBe("pcm_24000");
  }, 30_000);

  test("vad.* (milliseconds) -> the turn detector", () => {
    const config = loadConfig({});
    expect(pipelineSettings({}, config, 8000).vad).toEqual(vadDefaults);
    const vad = {
      confidenceThreshold: 0.6,
      minVolume: 0.02,
      startDuration: 100,
      stopDuration: 700,
      backbufferDuration: 400,
    };
    expect(pipelineSettings({ vad }, config, 8000).vad).toEqual({
      confidenceThreshold: 0.6,
      minVolume: 0.02,
      startDurationMs: 100,
      stopDurationMs: 700,
      backbufferDurationMs: 400,
    });
  });

  test("a tenant cannot choose where the keys go: url-like parameters are not read", async () => {
    const { stt, tts, llm } = await sent({
      url: "ws://127.0.0.1:9/steal",
      stt: { url: "ws://127.0.0.1:9/" },
      voice: { url: "ws://127.0.0.1:9/" },
      llm: { baseUrl: "http://127.0.0.1:9/" },
    });
    expect(stt.headers.authorization).toBe(`Token ${keys.DEEPGRAM_API_KEY}`);
    expect(tts.request.headers["xi-api-key"]).toBe(keys.ELEVENLABS_API_KEY);
    expect(llm.headers.authorization).toBe(`Bearer ${keys.OPENAI_API_KEY}`);
  }, 20_000);
});
