// A handoff on a SIP call: SIPp dials through Kamailio, the number's front desk (openai_realtime) hands the
// caller to a billing assistant on the pipeline inside the same call; the caller's RTP goes on to
// billing's VAD and Deepgram as mu-law at 8 kHz, billing speaks ulaw_8000, and hangs up with end_call.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import { handsOverOn } from "../bridge/fixtures";
import { type FakeDeepgramServer, startFakeDeepgram } from "../fakes/deepgram-server";
import { type FakeElevenLabsServer, startFakeElevenLabs } from "../fakes/elevenlabs-server";
import { speech } from "../helpers/speech";
import { keys } from "../voice/pipeline-fakes";
import { startRtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, uacCallVars } from "./helpers/sipp";

let world: SipWorld;
let stt: FakeDeepgramServer;
let tts: FakeElevenLabsServer;
let numberId: string;

beforeAll(async () => {
  world = await startSipWorld({ hana: "hanapass" }, { "+15550300042": "hana" });
  [stt, tts] = await Promise.all([
    startFakeDeepgram({ apiKey: keys.DEEPGRAM_API_KEY }),
    startFakeElevenLabs({ apiKey: keys.ELEVENLABS_API_KEY }),
  ]);
  const credentialId = await world.createCredential("hana", "hanapass");
  numberId = await world.createNumber(credentialId, "+15550300042");
  await world.startBridge("handoff", { ...keys, DEEPGRAM_URL: stt.url, ELEVENLABS_URL: tts.url });
  await world.registered(credentialId);
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await Promise.all([stt?.close(), tts?.close()]);
});

test("PCMU: a Realtime front desk hands the caller to a pipeline billing assistant; billing answers and hangs up", async () => {
  const { org, P } = world.tenant;
  const strategy = await org.post(`${P}/llm-generation-strategies`, {
    name: "billing pipeline",
    type: "pipeline",
    parameters: { vad: { stopDuration: 300 }, voice: { voiceId: "billing-voice" } },
  });
  const billing = await org.post(`${P}/assistants`, {
    name: "billing",
    systemPrompt: "You are Acme billing.",
    systemPromptGreeting: "Billing here.",
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
  });
  expect(billing.status).toBe(201);
  const billingId = billing.body.data.id as string;
  const desk = await world.createAssistant({
    numberId,
    greeting: "Hello, Acme here.",
    fake: handsOverOn("My bill please.", "billing"),
    extensions: [
      {
        type: "handoff",
        parameters: {
          destinations: [{ assistantId: billingId, description: "bills", message: "Billing takes over." }],
        },
      },
    ],
  });
  stt.transcripts.splice(0, stt.transcripts.length, "Is my invoice paid?");
  world.chat.reply = () => ({ text: "It is paid.", toolCalls: [{ name: "end_call", arguments: {} }] });

  const peer = await startRtpPeer("PCMU");
  const sipp = runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550300042",
    extraHeaders: [],
    vars: uacCallVars(peer.port, 40_000, { from: `"Ann" <sip:+15551234567@127.0.0.1>` }),
  });
  await eventually(() => peer.latched, "the bridge's first RTP packet");
  await eventually(() => rms(peer.heard()) > 300, "greeting audio");
  await Bun.sleep(1500);
  peer.say(await speech("My bill please.", 8000));
  // billing's greeting was asked of its TTS: the call is billing's now
  await eventually(() => tts.streams.find((s) => s.spoken.includes("Billing here.")), "billing's greeting", 20_000);
  await Bun.sleep(1500);
  peer.say(await speech("Is my invoice paid?", 8000));
  const result = await sipp;
  peer.stop();
  expect(result.logs.join("\n")).toContain("BRIDGE_HUNG_UP");
  expect(peer.received.every((p) => p.payloadType === 0)).toBe(true);

  const concluded = await eventually(
    () => world.hookBodies("call_concluded").find((b) => b.transport?.calledNumber === "+15550300042"),
    "call_concluded",
    30_000,
  );
  const said = concluded.messages.filter((m: any) => m.role === "ASSISTANT").map((m: any) => m.text);
  expect(said).toEqual(["Hello, Acme here.", "Billing takes over.", "Billing here.", "It is paid."]);
  expect(concluded.handoffs).toEqual([
    { at: expect.any(Number), fromAssistantId: desk.id, toAssistantId: billingId, destination: "billing" },
  ]);
  const [task] = await world.tasks((t) => t.callId === concluded.callId);
  expect(task).toMatchObject({ status: "completed", assistantId: desk.id, endedReason: "assistant-ended" });
  // billing on the phone line: mu-law at 8 kHz both ways, its own voice
  expect(Object.fromEntries(stt.streams.at(-1)!.query)).toMatchObject({ encoding: "mulaw", sample_rate: "8000" });
  const greeting = tts.streams.find((s) => s.spoken.includes("Billing here."))!;
  expect([greeting.voiceId, greeting.query.get("output_format")]).toEqual(["billing-voice", "ulaw_8000"]);
}, 90_000);
