// The turn_taking extension through the API: stored as given, every bad field a 400 naming it, a mode
// the strategy cannot run refused, one per assistant or agent, and one shape per extension type in the
// OpenAPI document. What a call gets of it (defaults filled, a changed strategy's fallback) is below.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";
import { turnTakingOf, turnTakingWithoutExtension } from "../../src/voice/turn-taking/turn-taking";

let api: TestApi;
let a: Tenant;

beforeAll(async () => {
  ({ api, a } = await startApiWithTwoTenants());
});
afterAll(() => api.stop());

const fields = (res: { body: any }) => res.body.errors.map((e: { field: string }) => e.field);
const turnTaking = (parameters: Record<string, unknown>) => ({ type: "turn_taking", parameters });

async function strategy(type: string, parameters: Record<string, unknown>) {
  const res = await a.org.post(`${a.P}/llm-generation-strategies`, { name: type, type, parameters });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

const everything = {
  endpointing: {
    mode: "punctuation",
    onPunctuationMs: 0,
    onNoPunctuationMs: 5000,
    eotThreshold: 0.9,
    eotTimeoutMs: 500,
    eagerness: "high",
  },
  preemptiveGeneration: true,
  interruption: {
    enabled: false,
    minDurationMs: 2000,
    minWords: 10,
    acknowledgements: ["uh-huh", "Got it!"],
    falseInterruptionMs: 0,
  },
  idle: { timeoutMs: 1000, messages: ["Hello?", "Still there, {{name}}?"], maxPrompts: 0, hangupAfterMs: 60_000 },
};

for (const kind of ["assistants", "agents"] as const) {
  describe(kind, () => {
    test("every parameter at its bounds is stored as given", async () => {
      const pipeline = await strategy("pipeline", {});
      const created = await a.org.post(`${a.P}/${kind}`, {
        name: "turns",
        llmAudioContentGenerationStrategyId: pipeline,
        extensions: [turnTaking(everything)],
      });
      expect(created.status).toBe(201);
      expect(created.body.data.extensions[0]).toMatchObject({ type: "turn_taking", parameters: everything });
      // an empty one is the defaults
      const empty = await a.org.post(`${a.P}/${kind}`, { name: "turns", extensions: [turnTaking({})] });
      expect(empty.status).toBe(201);
    });

    test("two turn_taking extensions are a 400 naming the second", async () => {
      const res = await a.org.post(`${a.P}/${kind}`, { name: "turns", extensions: [turnTaking({}), turnTaking({})] });
      expect(res.status).toBe(400);
      expect(fields(res)).toEqual(["extensions[1].type"]);
    });
  });
}

const p = "extensions[0].parameters";
test.each([
  [{ extra: 1 }, `${p}.extra`],
  [{ endpointing: { mode: "vibes" } }, `${p}.endpointing.mode`],
  [{ endpointing: { other: 1 } }, `${p}.endpointing.other`],
  [{ endpointing: { onPunctuationMs: 3001 } }, `${p}.endpointing.onPunctuationMs`],
  [{ endpointing: { onPunctuationMs: -1 } }, `${p}.endpointing.onPunctuationMs`],
  [{ endpointing: { onNoPunctuationMs: 5001 } }, `${p}.endpointing.onNoPunctuationMs`],
  [{ endpointing: { onNoPunctuationMs: 1.5 } }, `${p}.endpointing.onNoPunctuationMs`],
  [{ endpointing: { eotThreshold: 0.49 } }, `${p}.endpointing.eotThreshold`],
  [{ endpointing: { eotThreshold: 0.91 } }, `${p}.endpointing.eotThreshold`],
  [{ endpointing: { eotTimeoutMs: 499 } }, `${p}.endpointing.eotTimeoutMs`],
  [{ endpointing: { eotTimeoutMs: 10_001 } }, `${p}.endpointing.eotTimeoutMs`],
  [{ endpointing: { eagerness: "eager" } }, `${p}.endpointing.eagerness`],
  [{ preemptiveGeneration: "yes" }, `${p}.preemptiveGeneration`],
  [{ interruption: { enabled: 1 } }, `${p}.interruption.enabled`],
  [{ interruption: { minDurationMs: 2001 } }, `${p}.interruption.minDurationMs`],
  [{ interruption: { minWords: 11 } }, `${p}.interruption.minWords`],
  [{ interruption: { minWords: "2" } }, `${p}.interruption.minWords`],
  [{ interruption: { acknowledgements: Array(51).fill("ok") } }, `${p}.interruption.acknowledgements`],
  [{ interruption: { acknowledgements: [""] } }, `${p}.interruption.acknowledgements[0]`],
  [{ interruption: { falseInterruptionMs: 5001 } }, `${p}.interruption.falseInterruptionMs`],
  [{ interruption: { other: true } }, `${p}.interruption.other`],
  [{ idle: { timeoutMs: 999 } }, `${p}.idle.timeoutMs`],
  [{ idle: { timeoutMs: 60_001 } }, `${p}.idle.timeoutMs`],
  [{ idle: { messages: [] } }, `${p}.idle.messages`],
  [{ idle: { messages: ["1", "2", "3", "4", "5", "6"] } }, `${p}.idle.messages`],
  [{ idle: { maxPrompts: 11 } }, `${p}.idle.maxPrompts`],
  [{ idle: { hangupAfterMs: 999 } }, `${p}.idle.hangupAfterMs`],
  [{ idle: { other: 1 } }, `${p}.idle.other`],
] as const)("turn_taking %j is a 400 naming %s", async (parameters, field) => {
  const res = await a.org.post(`${a.P}/assistants`, { name: "turns", extensions: [turnTaking(parameters)] });
  expect(res.status).toBe(400);
  expect(fields(res)).toContain(field);
});

describe("a mode the strategy cannot run", () => {
  test("punctuation with openai_realtime is a 400 naming the mode; model is semantic_vad there", async () => {
    const realtime = await strategy("openai_realtime", {});
    const body = (mode: string) => ({
      name: "turns",
      llmAudioContentGenerationStrategyId: realtime,
      extensions: [turnTaking({ endpointing: { mode } })],
    });
    const refused = await a.org.post(`${a.P}/assistants`, body("punctuation"));
    expect(refused.status).toBe(400);
    expect(fields(refused)).toEqual([`${p}.endpointing.mode`]);
    expect((await a.org.post(`${a.P}/assistants`, body("model"))).status).toBe(201);
  });

  test("model with a pipeline that is not on a Flux model is a 400 naming the mode, on create and update", async () => {
    const nova = await strategy("pipeline", { stt: { model: "nova-3" } });
    const flux = await strategy("pipeline", { stt: { model: "flux-general-en" } });
    const withModel = (strategyId: string) => ({
      name: "turns",
      llmAudioContentGenerationStrategyId: strategyId,
      extensions: [
        { type: "call_analysis", parameters: { schema: "{}" } },
        turnTaking({ endpointing: { mode: "model" } }),
      ],
    });
    const refused = await a.org.post(`${a.P}/agents`, withModel(nova));
    expect(refused.status).toBe(400);
    expect(fields(refused)).toEqual(["extensions[1].parameters.endpointing.mode"]);
    const created = await a.org.post(`${a.P}/agents`, withModel(flux));
    expect(created.status).toBe(201);
    const updated = await a.org.put(`${a.P}/agents/${created.body.data.id}`, withModel(nova));
    expect(updated.status).toBe(400);
    expect(fields(updated)).toEqual(["extensions[1].parameters.endpointing.mode"]);
  });
});

test("the OpenAPI document has one extension shape per type, turn_taking's with its ranges", async () => {
  const doc = (await client(api.url).get("/swagger/json")).body;
  const schemas = doc.components.schemas;
  const shape = schemas.ExtensionTurnTaking;
  expect(shape.properties.type.const).toBe("turn_taking");
  const endpointing = shape.properties.parameters.properties.endpointing;
  expect(endpointing.properties.onNoPunctuationMs).toMatchObject({ minimum: 0, maximum: 5000 });
  expect(endpointing.additionalProperties).toBe(false);
  for (const name of ["ToolWebhook", "KnowledgeBase", "TransferCall", "CallContext", "CallAnalysis", "Other"])
    expect(schemas[`Extension${name}`]).toBeDefined();
  expect(JSON.stringify(doc.paths)).toContain("#/components/schemas/ExtensionTurnTaking");
});

describe("what a call gets", () => {
  const pipeline = { type: "pipeline", parameters: { stt: { model: "flux-general-en" } } };
  test("no extension: as before turn-taking could be tuned", () => {
    expect(turnTakingOf([], pipeline)).toBe(turnTakingWithoutExtension);
  });

  test("an empty extension: every default filled", () => {
    const { endpointing: e, interruption: i, ...rest } = turnTakingOf([turnTaking({})], pipeline);
    expect([e.mode, e.onPunctuationMs, e.onNoPunctuationMs, e.eotThreshold, e.eotTimeoutMs, e.eagerness]).toEqual([
      "silence",
      100,
      1500,
      0.7,
      5000,
      "auto",
    ]);
    expect([i.enabled, i.minDurationMs, i.minWords, i.falseInterruptionMs]).toEqual([true, 300, 0, 2000]);
    expect(i.acknowledgements.join(",")).toBe("okay,ok,uh-huh,mm-hmm,mhm,yeah,yes,right,sure,got it,i see");
    expect(rest).toEqual({ preemptiveGeneration: false, idle: null });
    expect(turnTakingOf([turnTaking({ idle: {} })], pipeline).idle).toEqual({
      timeoutMs: 7500,
      messages: ["Are you still there?"],
      maxPrompts: 2,
      hangupAfterMs: 10_000,
    });
  });

  test("a strategy changed after the extension was saved falls back to silence", () => {
    const model = [turnTaking({ endpointing: { mode: "model", eotThreshold: 0.8 } })];
    expect(turnTakingOf(model, pipeline).endpointing).toMatchObject({ mode: "model", eotThreshold: 0.8 });
    expect(turnTakingOf(model, { type: "pipeline", parameters: {} }).endpointing.mode).toBe("silence");
    const punctuation = [turnTaking({ endpointing: { mode: "punctuation" } })];
    expect(turnTakingOf(punctuation, { type: "openai_realtime", parameters: {} }).endpointing.mode).toBe("silence");
    expect(turnTakingOf(punctuation, pipeline).endpointing.mode).toBe("punctuation");
  });

  test("acknowledgements are compared as heard: lowercased, without punctuation", () => {
    const custom = turnTakingOf([turnTaking({ interruption: { acknowledgements: ["Got it!", "Mm-hmm."] } })], null);
    expect(custom.interruption.acknowledgements).toEqual(["got it", "mm-hmm"]);
  });
});
