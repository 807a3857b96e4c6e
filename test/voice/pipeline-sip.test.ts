// A pipeline call over SIP: SIPp dials through Kamailio, the bridge answers on PCMU, Silero hears the
// caller's RTP, Deepgram gets mu-law at 8 kHz and ElevenLabs is asked for ulaw_8000 (no resampling
// anywhere), a tool call runs, the agent hangs up with end_call, and call_concluded arrives.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import { orderLookupExchange } from "../bridge/fixtures";
import { scriptedReplies } from "../fakes/chat-completions-server";
import { type FakeDeepgramServer, startFakeDeepgram } from "../fakes/deepgram-server";
import { type FakeElevenLabsServer, startFakeElevenLabs } from "../fakes/elevenlabs-server";
import { toolSchema } from "../helpers/api";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { speech } from "../helpers/speech";
import { startRtpPeer } from "../sip/helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "../sip/helpers/sip-world";
import { runSipp, uacCallVars } from "../sip/helpers/sipp";
import { keys } from "./pipeline-fakes";

let world: SipWorld;
let tools: Receiver;
let stt: FakeDeepgramServer;
let tts: FakeElevenLabsServer;
let numberId: string;

beforeAll(async () => {
  world = await startSipWorld({ piper: "piperpass" }, { "+15550300001": "piper" });
  [stt, tts, tools] = await Promise.all([
    startFakeDeepgram({ apiKey: keys.DEEPGRAM_API_KEY }),
    startFakeElevenLabs({ apiKey: keys.ELEVENLABS_API_KEY }),
    startReceiver((req) => ({
      status: 200,
      body: `Order ${JSON.parse(req.body.toString()).parameters.orderId} ships tomorrow.`,
    })),
  ]);
  const credentialId = await world.createCredential("piper", "piperpass");
  numberId = await world.createNumber(credentialId, "+15550300001");
  await world.startBridge("pipeline", { ...keys, DEEPGRAM_URL: stt.url, ELEVENLABS_URL: tts.url });
  await world.registered(credentialId);
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await Promise.all([tools?.close(), stt?.close(), tts?.close()]);
});

test("PCMU: greeting, a spoken question with a tool call, the agent hangs up; call_concluded", async () => {
  const { org, P } = world.tenant;
  const strategy = await org.post(`${P}/llm-generation-strategies`, {
    name: "pipeline",
    type: "pipeline",
    parameters: { vad: { stopDuration: 300 } },
  });
  const assistant = await org.post(`${P}/assistants`, {
    name: "pipeline phone",
    systemPrompt: "You answer the phone.",
    systemPromptGreeting: "Hello, Acme here.",
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
    telephoneNumberId: numberId,
    extensions: [
      {
        type: "tool_webhook",
        parameters: { name: "lookup_order", serverUrl: `${tools.url}/orders`, schema: toolSchema("lookup_order") },
      },
    ],
    callEventHooks: ["call_concluded"].map((type) => ({ type, parameters: { url: `${world.hooks.url}/hooks` } })),
  });
  expect(assistant.status).toBe(201);
  stt.transcripts.push("Where is my order 42?");
  world.chat.reply = scriptedReplies([
    { text: "Let me check.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] },
  ]);
  // after the tool result, the model quotes it and ends the call
  const quote = world.chat.reply;
  world.chat.reply = (body) => {
    const reply = quote(body);
    return body.messages.at(-1)?.role === "tool"
      ? { ...reply, toolCalls: [{ name: "end_call", arguments: {} }] }
      : reply;
  };

  const peer = await startRtpPeer("PCMU");
  const sipp = runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550300001",
    extraHeaders: [],
    vars: uacCallVars(peer.port, 30_000, { from: `"Bob" <sip:+15551234567@127.0.0.1>` }),
  });
  await eventually(() => peer.latched, "the bridge's first RTP packet");
  await eventually(() => rms(peer.heard()) > 300, "greeting audio");
  await Bun.sleep(1500);
  peer.say(await speech("Where is my order forty two?", 8000));
  const result = await sipp;
  peer.stop();
  expect(result.logs.join("\n")).toContain("BRIDGE_HUNG_UP");
  expect(peer.received.every((p) => p.payloadType === 0)).toBe(true);

  const concluded = await eventually(
    () => world.hookBodies("call_concluded").find((b) => b.transport?.calledNumber === "+15550300001"),
    "call_concluded",
    30_000,
  );
  const toolCallId = concluded.messages.find((m: any) => m.type === "tool_call")?.callId;
  expect(concluded.messages.map(({ timestamp, ...m }: any) => m)).toEqual([
    ...orderLookupExchange(toolCallId),
    { type: "text", role: "ASSISTANT", text: "lookup_order: Order 42 ships tomorrow." },
  ]);
  const [task] = await world.tasks((t) => t.callId === concluded.callId);
  expect(task).toMatchObject({ status: "completed", error: null });
  // mu-law at 8 kHz end to end
  expect(Object.fromEntries(stt.streams.at(-1)!.query)).toMatchObject({ encoding: "mulaw", sample_rate: "8000" });
  expect(tts.streams.every((s) => s.query.get("output_format") === "ulaw_8000")).toBe(true);
}, 60_000);
