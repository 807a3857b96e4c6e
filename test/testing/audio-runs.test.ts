// A test run in the audio modality: the caller's turns are spoken through the environment's TTS
// (the ElevenLabs fake, espeak speech) and streamed in real time to a pipeline assistant (Silero VAD,
// the Deepgram fake as its STT); the agent's replies are heard through the environment's STT (a second
// Deepgram fake, as the worker's DEEPGRAM_URL). The result keeps heard and intended, and the latency.
// The bridge keeps recordings in object storage (a real SeaweedFS): a test call's recording follows the
// same store as any call's.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parseWav } from "../../src/audio/wav";
import { scriptedReplies } from "../fakes/chat-completions-server";
import { type FakeDeepgramServer, startFakeDeepgram } from "../fakes/deepgram-server";
import { type FakeElevenLabsServer, startFakeElevenLabs } from "../fakes/elevenlabs-server";
import { recordingFromBucket } from "../helpers/recording-bucket";
import { startSeaweedFs, type SeaweedFs } from "../helpers/seaweedfs";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { startWorld, type World } from "../bridge/fixtures";
import { keys } from "../voice/pipeline-fakes";

let world: World;
let worker: TestWorker;
let bridgeEars: FakeDeepgramServer;
let callerEars: FakeDeepgramServer;
let tts: FakeElevenLabsServer;
let store: SeaweedFs;
let assistantId: string;
const STOP_MS = 800;

// Lines that end on a voiced sound: "No thanks." ends in 180 ms of "ks" (RMS 380-830, over the caller
// line's -54 dBFS test) that Silero may or may not count as speech, so the agent's VAD could end the
// turn up to ~470 ms before the caller line's end of voice: firstAudioMs p50 107-129 ms in three
// fresh-clone CI runs against 299-325 in local ones
const callerLines = ["A table for two at seven.", "That is all for now."];
// what the caller's STT makes of the agent's replies: close to, not exactly, what was meant
const heardReplies = ["Luigis how can I help", "Booked table twelve", "Goodbye then"];

beforeAll(async () => {
  const { address } = await ensureTemporal();
  [bridgeEars, callerEars, tts, store] = await Promise.all([
    startFakeDeepgram({ apiKey: keys.DEEPGRAM_API_KEY, transcript: (_s, turn) => callerLines[turn] ?? "" }),
    startFakeDeepgram({ transcript: (_s, turn) => heardReplies[turn] ?? "" }),
    startFakeElevenLabs(),
    startSeaweedFs(),
  ]);
  world = await startWorld({ ...keys, DEEPGRAM_URL: bridgeEars.url, ELEVENLABS_URL: tts.url, ...store.env }, store.env);
  worker = await startWorker({
    address,
    backoffBaseMs: 1_000,
    env: {
      BRIDGE_URL: world.bridge.url,
      OPENAI_BASE_URL: world.chat.baseUrl,
      DEEPGRAM_URL: callerEars.url,
      ELEVENLABS_URL: tts.url,
    },
  });
  const { tenant } = world;
  const strategy = await tenant.org.post(`${tenant.P}/llm-generation-strategies`, {
    name: "pipeline",
    type: "pipeline",
    // a long stopDuration: where Silero and the caller line put the end of the words may still differ
    // by tens of ms, and no pause inside a line comes near it
    parameters: { vad: { startDuration: 64, stopDuration: STOP_MS } },
  });
  const created = await tenant.org.post(`${tenant.P}/assistants`, {
    name: "Luigi's",
    systemPrompt: "You take table bookings for Luigi's.",
    systemPromptGreeting: "Luigi's, how can I help?",
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
  });
  assistantId = created.body.data.id;
}, 90_000);
afterAll(async () => {
  await worker?.kill();
  await world?.stop();
  await Promise.all([bridgeEars?.close(), callerEars?.close(), tts?.close(), store?.close()]);
});

async function untilCompleted(runId: string) {
  const { tenant } = world;
  for (let i = 0; ; i++) {
    const run = (await tenant.org.get(`${tenant.P}/test-runs/${runId}`)).body.data;
    if (run.status === "completed" || i > 240) return run;
    await Bun.sleep(250);
  }
}

test("spoken turns, heard replies, latency at the socket", async () => {
  const { tenant } = world;
  world.chat.reply = scriptedReplies([{ text: "Booked, table 12." }, { text: "Goodbye then." }]);
  const created = await tenant.org.post(`${tenant.P}/test-runs`, {
    assistantId,
    modality: "audio",
    scenarios: [
      {
        name: "books by voice",
        kind: "scripted",
        turns: callerLines.map((say) => ({ say })),
        criteria: [
          { name: "quotes the table", type: "said", pattern: "table 12", by: "agent" },
          { name: "answers in time", type: "latency", p95MaxMs: 20_000 },
          { name: "caller hung up", type: "endedReason", in: ["hangup"] },
        ],
      },
    ],
  });
  expect(created.status).toBe(202);
  const runId = created.body.data.id;
  const run = await untilCompleted(runId);
  const [result] = (await tenant.org.get(`${tenant.P}/test-runs/${runId}/results`)).body.data;
  expect({ status: run.status, verdict: run.verdict, error: result.error }).toEqual({
    status: "completed",
    verdict: "passed",
    error: null,
  });
  expect(result.criteria.map((c: { verdict: string }) => c.verdict)).toEqual(["pass", "pass", "pass"]);
  // the agent's replies: what it meant (the bridge's transcript) beside what the caller heard (JUnit's transcript)
  const junit = await (
    await fetch(`${world.api.url}${tenant.P}/test-runs/${runId}/junit`, {
      headers: { authorization: `Bearer ${tenant.orgToken}` },
    })
  ).text();
  expect(junit).toContain("agent (heard): Luigis how can I help\nagent (intended): Luigi's, how can I help?");
  expect(junit).toContain(
    "caller: A table for two at seven.\nagent (heard): Booked table twelve\nagent (intended): Booked, table 12.",
  );
  expect(junit).toContain("agent (heard): Goodbye then\nagent (intended): Goodbye then.");
  // one latency sample per spoken turn, measured at the socket
  expect(result.metrics.turns).toBe(2);
  // from the caller's last words, so the VAD's stopDuration is in it (the TTS pads the caller's speech
  // with quiet, which the agent may answer during: measured from its end, this came out as 0)
  expect(result.metrics.firstAudioMs.p50).toBeGreaterThan(STOP_MS / 2);
  // the caller really spoke: its lines went through the TTS, and the bridge's STT heard audio from it
  const spoken = tts.streams.flatMap((s) => s.spoken).join(" ");
  for (const line of callerLines) expect(spoken).toContain(line);
  expect(bridgeEars.streams.at(-1)!.audioBytes).toBeGreaterThan(16_000 * 2);
  // and the caller's STT heard 16 kHz audio from the bridge
  expect(callerEars.streams.at(-1)!.query.get("sample_rate")).toBe("16000");
  // the bridge's record of the call heard the caller's words through its own STT
  const task = (await tenant.org.get(`${tenant.P}/agent-tasks/${result.agentTaskId}`)).body.data;
  expect(JSON.stringify(task.messages)).toContain("A table for two at seven.");
  // its recording is an object in the bucket, fetched through the route's 302: the whole call
  const stored = await recordingFromBucket(store, world.api, tenant, result.agentTaskId);
  expect(task.recording).toMatchObject({ contentType: "audio/wav", bytes: stored.length });
  const wav = parseWav(stored);
  const callSeconds = (Date.parse(task.endedAt) - Date.parse(task.startedAt)) / 1000;
  expect(Math.abs(wav.samples.length / wav.sampleRate - callSeconds)).toBeLessThan(0.2);
}, 90_000);

test("a caller STT that is down makes the result an error, never a pass", async () => {
  const { tenant } = world;
  callerEars.mode = "refuse";
  try {
    const created = await tenant.org.post(`${tenant.P}/test-runs`, {
      assistantId,
      modality: "audio",
      scenarios: [
        {
          name: "cannot hear",
          kind: "scripted",
          turns: [{ say: "Hello?" }],
          criteria: [{ name: "hung up", type: "endedReason", in: ["hangup"] }],
        },
      ],
    });
    const run = await untilCompleted(created.body.data.id);
    expect(run).toMatchObject({ status: "completed", verdict: "error", counts: { error: 1, passed: 0 } });
    const [result] = (await tenant.org.get(`${tenant.P}/test-runs/${run.id}/results`)).body.data;
    expect(result.error).toContain("speech-to-text");
  } finally {
    callerEars.mode = "ok";
  }
}, 90_000);
