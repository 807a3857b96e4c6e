// Strategies are validated by type: an unknown type names the known ones, each engine's parameters
// are range-checked with the field named, and no strategy can carry a URL (providers are the operator's).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let a: Tenant;
beforeAll(async () => {
  ({ api, a } = await startApiWithTwoTenants());
});
afterAll(() => api.stop());

const post = (type: string, parameters: Record<string, unknown>) =>
  a.org.post(`${a.P}/llm-generation-strategies`, { name: "s", type, parameters });
const fields = async (type: string, parameters: Record<string, unknown>) => {
  const res = await post(type, parameters);
  expect(res.status).toBe(400);
  return (res.body.errors as { field: string }[]).map((e) => e.field).sort();
};

describe("strategy types", () => {
  test("an unknown type is a 400 naming the known ones", async () => {
    const res = await post("magic_llm", {});
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: "type", message: "unknown strategy type; known types: pipeline, openai_realtime" },
    ]);
    const created = await post("pipeline", {});
    const updated = await a.org.put(`${a.P}/llm-generation-strategies/${created.body.data.id}`, {
      name: "s",
      type: "nope",
      parameters: {},
    });
    expect(updated.status).toBe(400);
    expect(updated.body.errors[0].field).toBe("type");
  });

  test("openai_realtime takes only a Realtime voice, unless the provider is named openai", async () => {
    expect(await fields("openai_realtime", { voice: { voiceId: "21m00Tcm4TlvDq8ikWAM" } })).toEqual([
      "parameters.voice.voiceId",
    ]);
    expect((await post("openai_realtime", { voice: { voiceId: "Coral" } })).status).toBe(201);
    expect((await post("openai_realtime", { voice: { voiceId: "newvoice", provider: "openai" } })).status).toBe(201);
    // the pipeline's voices are ElevenLabs ids
    expect((await post("pipeline", { voice: { voiceId: "21m00Tcm4TlvDq8ikWAM" } })).status).toBe(201);
  });

  test("a full pipeline strategy is accepted and stored as given", async () => {
    const parameters = {
      temperature: 0.4,
      outputSampleRate: 8000,
      voice: {
        provider: "elevenlabs",
        voiceId: "21m00Tcm4TlvDq8ikWAM",
        modelId: "eleven_flash_v2_5",
        speed: 1.1,
        stability: 0.5,
        similarityBoost: 0.75,
        style: 0,
        useSpeakerBoost: true,
      },
      vad: {
        confidenceThreshold: 0.5,
        minVolume: 0.01,
        startDuration: 150,
        stopDuration: 400,
        backbufferDuration: 1000,
      },
      llm: { model: "gpt-4o-mini" },
      stt: { model: "nova-3", language: "en" },
    };
    const res = await post("pipeline", parameters);
    expect(res.status).toBe(201);
    expect(res.body.data.parameters).toEqual(parameters);
  });

  test("pipeline ranges: probabilities and ElevenLabs settings 0..1, speed 0.7..1.2, temperature 0..2, durations >= 0, known rates", async () => {
    expect(
      await fields("pipeline", {
        temperature: 2.5,
        outputSampleRate: 12000,
        voice: { speed: 1.5, stability: -0.1, similarityBoost: 2, style: 1.1, useSpeakerBoost: "yes" },
        vad: { confidenceThreshold: 1.2, minVolume: -1, startDuration: -5, stopDuration: "1s", backbufferDuration: -1 },
      }),
    ).toEqual(
      [
        "parameters.outputSampleRate",
        "parameters.temperature",
        "parameters.voice.similarityBoost",
        "parameters.voice.speed",
        "parameters.voice.stability",
        "parameters.voice.style",
        "parameters.voice.useSpeakerBoost",
        "parameters.vad.backbufferDuration",
        "parameters.vad.confidenceThreshold",
        "parameters.vad.minVolume",
        "parameters.vad.startDuration",
        "parameters.vad.stopDuration",
      ].sort(),
    );
    const res = await post("pipeline", { voice: { stability: 1.5 } });
    expect(res.body.errors).toEqual([
      { field: "parameters.voice.stability", message: "Expected number to be less or equal to 1" },
    ]);
    expect(await fields("pipeline", { toolFiller: { text: "", afterMs: 20_000 } })).toEqual([
      "parameters.toolFiller.afterMs",
      "parameters.toolFiller.text",
    ]);
    expect((await post("pipeline", { toolFiller: { text: "One moment.", afterMs: 500 } })).status).toBe(201);
  });

  test("openai_realtime: outputSampleRate is 8000 or 24000, its own speed range, durations in ms", async () => {
    expect(await fields("openai_realtime", { outputSampleRate: 16000, voice: { speed: 2 }, temperature: -1 })).toEqual([
      "parameters.outputSampleRate",
      "parameters.temperature",
      "parameters.voice.speed",
    ]);
    expect(
      (await post("openai_realtime", { model: "gpt-realtime", outputSampleRate: 24000, vad: { stopDuration: 500 } }))
        .status,
    ).toBe(201);
  });

  test("no strategy carries a URL, nor a parameter its engine does not know", async () => {
    expect(await fields("openai_realtime", { url: "wss://attacker.example/v1/realtime" })).toEqual(["parameters.url"]);
    expect(
      await fields("pipeline", {
        url: "wss://x.example",
        stt: { url: "wss://x.example" },
        voice: { url: "x" },
        llm: { baseUrl: "http://x" },
      }),
    ).toEqual(["parameters.llm.baseUrl", "parameters.stt.url", "parameters.url", "parameters.voice.url"]);
    // the pipeline's own keys belong to the pipeline only
    expect(await fields("openai_realtime", { llm: { model: "x" } })).toEqual(["parameters.llm"]);
  });
});
