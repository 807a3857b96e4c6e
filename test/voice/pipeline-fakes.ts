// The three pipeline provider fakes together, a config pointing at them, and a caller that streams
// 20 ms frames in real time into a VoiceSession (silence when it has nothing to say).
import { expect } from "bun:test";
import { concatPcm } from "../../src/audio/pcm";
import { loadConfig } from "../../src/config";
import { createVoiceSession } from "../../src/voice/create-voice-session";
import type { VoiceSession, VoiceTool } from "../../src/voice/engine";
import {
  type FakeChatServer,
  scriptedReplies,
  type StreamedReply,
  startFakeChatServer,
} from "../fakes/chat-completions-server";
import { type FakeDeepgramOptions, type FakeDeepgramServer, startFakeDeepgram } from "../fakes/deepgram-server";
import { type FakeElevenLabsServer, type FakeElevenLabsOptions, startFakeElevenLabs } from "../fakes/elevenlabs-server";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { startWorld, type World } from "../bridge/fixtures";

export const keys = {
  DEEPGRAM_API_KEY: "dg-test-key",
  ELEVENLABS_API_KEY: "xi-test-key",
  OPENAI_API_KEY: "sk-test-key",
};

export type PipelineFakes = {
  stt: FakeDeepgramServer;
  tts: FakeElevenLabsServer;
  llm: FakeChatServer;
  env: Record<string, string>;
  /** Scripts the caller's words (STT) and the model's replies (LLM), in order. */
  script(turns: { userSays: string; reply: StreamedReply }[]): void;
  close(): Promise<void>;
};

export async function startPipelineFakes(ttsOptions: FakeElevenLabsOptions = {}): Promise<PipelineFakes> {
  const [stt, tts, llm] = await Promise.all([
    startFakeDeepgram({ apiKey: keys.DEEPGRAM_API_KEY }),
    startFakeElevenLabs({ apiKey: keys.ELEVENLABS_API_KEY, ...ttsOptions }),
    startFakeChatServer(),
  ]);
  return {
    stt,
    tts,
    llm,
    env: {
      ...keys,
      DEEPGRAM_URL: stt.url,
      ELEVENLABS_URL: tts.url,
      OPENAI_BASE_URL: llm.baseUrl,
      PIPELINE_LLM_MODEL: "gpt-test-mini",
    },
    script(turns) {
      stt.transcripts.splice(0, stt.transcripts.length, ...turns.map((t) => t.userSays)); // a test's script replaces the last one's
      llm.reply = scriptedReplies(turns.map((t) => t.reply));
    },
    close: async () => void (await Promise.all([stt.close(), tts.close(), llm.close()])),
  };
}

export const weatherTool: VoiceTool = {
  name: "get_weather",
  description: "Current weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

export type SessionOptions = {
  greeting?: string;
  greetingWaitsForCallee?: boolean;
  sampleRate?: number;
  env?: Record<string, string>;
};

export async function connectPipelineSession(
  fakes: PipelineFakes,
  parameters: Record<string, unknown> = {},
  options: SessionOptions = {},
) {
  return createVoiceSession(
    { type: "pipeline", parameters },
    {
      instructions: "You are the Acme front desk.",
      greeting: options.greeting ?? null,
      greetingWaitsForCallee: options.greetingWaitsForCallee,
      tools: [weatherTool],
      sampleRate: options.sampleRate ?? 8000,
      config: loadConfig({ ...process.env, ...fakes.env, ...options.env }),
    },
  );
}

/** Streams caller audio into `session` in real time, 20 ms at a time. */
export function streamCaller(session: VoiceSession) {
  const frame = session.sampleRate / 50;
  let queue: Int16Array[] = [];
  const started = performance.now();
  let sent = 0;
  let speechSentAt = 0;
  const timer = setInterval(() => {
    while (sent * 20 <= performance.now() - started) {
      const next = queue.shift();
      if (next && !speechSentAt) speechSentAt = performance.now();
      session.sendAudio(next ?? new Int16Array(frame));
      sent++;
    }
  }, 5);
  let speechStartsAtMs = 0;
  return {
    /** Milliseconds of caller audio sent so far (the stream's own clock, whatever the machine's load). */
    sentMs: () => sent * 20,
    /** Queues speech; resolves when it has been sent, with the moment its first frame went out. */
    async say(samples: Int16Array): Promise<number> {
      speechSentAt = 0;
      speechStartsAtMs = (sent + queue.length) * 20;
      for (let i = 0; i < samples.length; i += frame)
        queue.push(
          concatPcm([samples.subarray(i, i + frame), new Int16Array(Math.max(0, i + frame - samples.length))]),
        );
      while (queue.length > 0) await Bun.sleep(10);
      return speechSentAt;
    },
    /** Where in the caller's stream (ms) the last `say` began. */
    speechStartsAtMs: () => speechStartsAtMs,
    stop() {
      clearInterval(timer);
      queue = [];
    },
  };
}

export type PipelineWorld = {
  world: World;
  worker: TestWorker;
  stt: FakeDeepgramServer;
  tts: FakeElevenLabsServer;
  stop(): Promise<void>;
};

/**
 * A bridge world (fixtures.ts) whose pipeline calls reach the Deepgram and ElevenLabs fakes, and a hook
 * worker delivering its calls' events; `env` is more of the bridge's.
 */
export async function startPipelineWorld(
  options: { stt?: FakeDeepgramOptions; tts?: FakeElevenLabsOptions; env?: Record<string, string> } = {},
): Promise<PipelineWorld> {
  const { address } = await ensureTemporal();
  const [stt, tts, worker] = await Promise.all([
    startFakeDeepgram({ apiKey: keys.DEEPGRAM_API_KEY, ...options.stt }),
    startFakeElevenLabs({ apiKey: keys.ELEVENLABS_API_KEY, ...options.tts }),
    startWorker({ address, backoffBaseMs: 1_000 }),
  ]);
  const world = await startWorld({ ...keys, DEEPGRAM_URL: stt.url, ELEVENLABS_URL: tts.url, ...options.env });
  return {
    world,
    worker,
    stt,
    tts,
    async stop() {
      await world.stop();
      await Promise.all([worker.kill(), stt.close(), tts.close()]);
    },
  };
}

export type PipelineAssistantSpec = {
  name?: string;
  greeting?: string;
  systemPrompt?: string;
  /** the turn_taking extension's parameters (none: no extension) */
  turnTaking?: Record<string, unknown> | null;
  /** more extensions, as the API takes them */
  extensions?: unknown[];
  /** the strategy's stt parameters */
  stt?: Record<string, unknown>;
  /** more of the strategy's parameters (a voice) */
  strategy?: Record<string, unknown>;
  kind?: "assistants" | "agents";
  /** where on the world's receiver its call_concluded goes (default /hooks) */
  hooksPath?: string;
};

/** A pipeline assistant (VAD: 64 ms to start, 300 ms to stop) whose call_concluded goes to the world's receiver. */
export async function pipelineAssistant(world: World, spec: PipelineAssistantSpec = {}) {
  const { org, P } = world.tenant;
  const strategy = await org.post(`${P}/llm-generation-strategies`, {
    name: "pipeline",
    type: "pipeline",
    parameters: { vad: { startDuration: 64, stopDuration: 300 }, stt: spec.stt ?? {}, ...spec.strategy },
  });
  expect(strategy.status).toBe(201);
  const created = await org.post(`${P}/${spec.kind ?? "assistants"}`, {
    name: spec.name ?? "pipeline desk",
    systemPrompt: spec.systemPrompt ?? "You are the Acme front desk.",
    ...(spec.greeting && { systemPromptGreeting: spec.greeting }),
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
    extensions: [
      ...(spec.turnTaking ? [{ type: "turn_taking", parameters: spec.turnTaking }] : []),
      ...(spec.extensions ?? []),
    ],
    callEventHooks: [
      { type: "call_concluded", parameters: { url: `${world.hooks.url}${spec.hooksPath ?? "/hooks"}` } },
    ],
  });
  expect(created.status).toBe(201);
  return created.body.data.id as string;
}
