// An outbound call's greeting with each engine, on a real call: POST P/calls, the bridge dials
// through Kamailio (the trunk) to a SIPp UAS whose RTP is the test's peer. A callee who says "Hello?"
// at once (espeak-ng over RTP) hears the rendered greeting right after it, and nothing else: the
// LLM does not answer their "Hello?" as well. A callee who says nothing hears it after 2 s.
// Each call lasts 9 s whatever happens in it, so all five are placed at once (the credential takes
// five) and each test awaits its own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import { scriptedReplies } from "../fakes/chat-completions-server";
import { type FakeDeepgramServer, startFakeDeepgram } from "../fakes/deepgram-server";
import { type FakeElevenLabsServer, startFakeElevenLabs } from "../fakes/elevenlabs-server";
import { speech } from "../helpers/speech";
import { freePort } from "../helpers/temporal";
import { keys } from "../voice/pipeline-fakes";
import { startRtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { startSippUas, uasEnding } from "./helpers/sipp-uas";

let world: SipWorld;
let stt: FakeDeepgramServer;
let tts: FakeElevenLabsServer;
let numberId: string;
let fake: Awaited<ReturnType<SipWorld["createAssistant"]>>["fake"];
const assistantIds = { openai_realtime: "", pipeline: "" };
let calls: Record<(typeof callees)[number], Promise<string[][]>>;
const callees = ["realtimeHello", "realtimeSilent", "pipelineHello", "pipelineSilent", "screened"] as const;
const port: Record<(typeof callees)[number], number> = {} as never;
const number: Record<(typeof callees)[number], string> = {} as never;
const greeting = "Hi {{first_name}}, this is Acme calling about your order {{order}}. This call is recorded.";
const rendered = "Hi Ada, this is Acme calling about your order 42. This call is recorded.";
const llmAnswer = "An answer of the LLM's own.";

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {});
  [stt, tts] = await Promise.all([
    startFakeDeepgram({ apiKey: keys.DEEPGRAM_API_KEY }),
    startFakeElevenLabs({ apiKey: keys.ELEVENLABS_API_KEY }),
  ]);
  const dids: Record<string, string> = {};
  for (const [i, name] of callees.entries()) {
    port[name] = await freePort();
    number[name] = `+1555050000${i}`;
    dids[number[name].slice(1)] = `127.0.0.1:${port[name]}`;
  }
  ({ numberId } = await world.registeredCredential({
    user: "greet",
    dids,
    number: "+15550509999",
    bridge: "greet",
    maxAgentTasks: 5,
    env: { ...keys, DEEPGRAM_URL: stt.url, ELEVENLABS_URL: tts.url },
  }));
  const greetingAudio = await speech(rendered, 24000);
  const realtime = await world.createAssistant({
    numberId,
    greeting,
    fake: {
      // the provider's own answer to the first turn, were it asked for one
      turns: [{ userSays: "Hello?", reply: { text: llmAnswer } }],
      onInstructions: (instructions) =>
        instructions.includes(rendered) ? { text: rendered, audio: greetingAudio } : { text: instructions },
    },
  });
  assistantIds.openai_realtime = realtime.id;
  fake = realtime.fake;
  const { org, P } = world.tenant;
  const strategy = await org.post(`${P}/llm-generation-strategies`, {
    name: "pipeline",
    type: "pipeline",
    parameters: { vad: { stopDuration: 300 } },
  });
  const pipeline = await org.post(`${P}/assistants`, {
    name: "pipeline caller",
    systemPrompt: "You call about orders.",
    systemPromptGreeting: greeting,
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
    callEventHooks: ["call_concluded"].map((type) => ({ type, parameters: { url: `${world.hooks.url}/hooks` } })),
  });
  expect(pipeline.status).toBe(201);
  assistantIds.pipeline = pipeline.body.data.id;
  // the pipeline callee who says "Hello?" is the one whose speech reaches the fake STT
  stt.transcripts.push("Hello?");
  calls = {
    realtimeHello: call("openai_realtime", "realtimeHello", "Hello?"),
    realtimeSilent: call("openai_realtime", "realtimeSilent", null),
    pipelineHello: call("pipeline", "pipelineHello", "Hello?"),
    pipelineSilent: call("pipeline", "pipelineSilent", null),
    screened: call("openai_realtime", "screened", "Hello?", { voicemail: { action: "hangup" } }),
  };
  // each test awaits (and so reports) its own call's failure
  for (const placed of Object.values(calls)) placed.catch(() => {});
}, 90_000);
afterAll(async () => {
  await world?.stop();
  await Promise.all([stt?.close(), tts?.close()]);
});

/** Places a call to `callee`, whose peer says `words` from the answer on; the call's messages once it concluded. */
async function call(
  engine: keyof typeof assistantIds,
  callee: (typeof callees)[number],
  words: string | null,
  more: Record<string, unknown> = {},
) {
  const peer = await startRtpPeer("PCMU");
  const uas = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: peer.port, RING_MS: 100, ENDING: uasEnding.byeAfter(9000) },
    port[callee],
  );
  // queued now, sent from the answer on: the peer sends once the bridge's RTP reaches it (after the 200)
  if (words) peer.say(await speech(words, 8000));
  world.chat.reply = scriptedReplies([{ text: llmAnswer }]);
  const placed = await world.tenant.org.post(`${world.tenant.P}/calls`, {
    assistantId: assistantIds[engine],
    phoneNumberId: numberId,
    to: number[callee],
    variables: { first_name: "Ada", order: "42" },
    ...more,
  });
  expect(placed.status).toBe(201);
  await eventually(() => rms(peer.heard()) > 300, "the greeting's audio", 20_000);
  await uas.result;
  peer.stop();
  const concluded = await eventually(
    () => world.hookBodies("call_concluded").find((b) => b.callId === placed.body.data.callId),
    "call_concluded",
    30_000,
  );
  return concluded.messages.map((m: { role: string; text: string }) => [m.role, m.text]) as string[][];
}

for (const engine of ["openai_realtime", "pipeline"] as const) {
  const [hello, silent] =
    engine === "pipeline"
      ? (["pipelineHello", "pipelineSilent"] as const)
      : (["realtimeHello", "realtimeSilent"] as const);

  test(`${engine}: the callee says "Hello?" at once and hears the rendered greeting right after it, and no other answer`, async () => {
    expect(await calls[hello]).toEqual([
      ["USER", "Hello?"],
      ["ASSISTANT", rendered],
    ]);
    if (engine !== "openai_realtime") return;
    // one response each, the greeting's: no provider session (this call's, and the two other realtime
    // calls' that ran beside it) was left to answer a turn itself
    await Promise.all([calls.realtimeSilent, calls.screened]);
    expect(fake.sessions).toHaveLength(3);
    for (const session of fake.sessions) {
      const responses = session.received.filter((e: any) => e.type === "response.create");
      expect(responses.map((e: any) => e.response?.instructions)).toEqual([expect.stringContaining(rendered)]);
    }
  }, 60_000);

  test(`${engine}: a callee who says nothing hears the rendered greeting after the silence`, async () => {
    expect(await calls[silent]).toEqual([["ASSISTANT", rendered]]);
  }, 60_000);
}

test('screened for voicemail: the callee\'s "Hello?" makes them a person, and the greeting answers it', async () => {
  expect(await calls.screened).toEqual([
    ["USER", "Hello?"],
    ["ASSISTANT", rendered],
  ]);
}, 60_000);
