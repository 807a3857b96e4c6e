// Whole inbound calls: SIPp dials a number through Kamailio, the bridge answers with a fake voice
// provider, real speech flows both ways over RTP (the caller's media is the test's RTP peer), and
// the hooks arrive through Temporal with the SIP transport.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import { parseWav } from "../../src/audio/wav";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { speech } from "../helpers/speech";
import { startRtpPeer, type Law } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, uacCallVars } from "./helpers/sipp";

let world: SipWorld;
let tools: Receiver;
let credentialId: string;
let numbers: { main: string; plain: string; fallback: string; late: string };

beforeAll(async () => {
  world = await startSipWorld(
    { desk: "deskpass" },
    { "+15550200001": "desk", "15550200002": "desk;contact", "+15550200003": "desk", "+15550200004": "desk" },
  );
  tools = await startReceiver((req) => ({
    status: 200,
    body: `Order ${JSON.parse(req.body.toString()).parameters.orderId} ships tomorrow.`,
  }));
  credentialId = await world.createCredential("desk", "deskpass");
  numbers = {
    main: await world.createNumber(credentialId, "+15550200001"),
    plain: await world.createNumber(credentialId, "15550200002"),
    fallback: await world.createNumber(credentialId, "+15550209999", true),
    late: await world.createNumber(credentialId, "+15550200004"),
  };
  await world.startBridge("calls");
  await world.registered(credentialId);
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await tools?.close();
});

const call = (service: string, rtpPort: number, law: Law, from: string, extraHeaders: string[] = [], callMs = 20_000) =>
  runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service,
    extraHeaders,
    vars: uacCallVars(rtpPort, callMs, { from, law }),
  });

const concludedFor = (assistantId: string) =>
  eventually(
    async () => {
      const task = (await world.tasks((t) => t.assistantId === assistantId))[0];
      return task && world.hookBodies("call_concluded").find((b) => b.callId === task.callId);
    },
    "call_concluded",
    30_000,
  );

// the calls, each to a number and assistant (with a fake provider) of its own, run at once: most of
// each is real time (speech played out, a caller's fixed wait)
test.concurrent("speech both ways over PCMU; the caller hangs up; call_concluded carries numbers, messages, recording", async () => {
  const greeting = "Hello, Acme here.";
  const greetingAudio = await speech(greeting, 24000);
  const assistant = await world.createAssistant({
    numberId: numbers.main,
    greeting,
    fake: {
      onInstructions: () => ({ text: greeting, audio: greetingAudio }),
      turns: [
        {
          userSays: "What time do you open?",
          reply: { text: "We open at nine.", audio: await speech("We open at nine.", 24000) },
        },
      ],
    },
  });
  const peer = await startRtpPeer("PCMU");
  const sipp = call("+15550200001", peer.port, "PCMU", `"Alice" <sip:+15557654321@127.0.0.1>`, [], 8000);
  await eventually(() => peer.latched, "the bridge's first RTP packet");
  // the greeting plays out, then the caller speaks (speaking over it would cut the stored greeting: barge-in)
  await eventually(() => rms(peer.heard()) > 300, "greeting audio");
  await eventually(() => {
    const heard = peer.heard();
    const onset = heard.findIndex((s) => Math.abs(s) > 1000);
    return heard.length - onset >= 8000 * (greetingAudio.length / 24000 + 0.3);
  }, "the greeting to play out");
  peer.say(await speech("What time do you open?", 8000));
  const result = await sipp;
  peer.stop();
  expect(result.code).toBe(0);
  expect(result.logs.join("\n")).toContain("CALLER_HUNG_UP");

  const concluded = await concludedFor(assistant.id);
  expect(concluded.transport).toEqual({ type: "sip", calledNumber: "+15550200001", callingNumber: "+15557654321" });
  expect(concluded.messages.map(({ timestamp, ...m }: any) => m)).toEqual([
    { type: "text", role: "ASSISTANT", text: greeting },
    { type: "text", role: "USER", text: "What time do you open?" },
    { type: "text", role: "ASSISTANT", text: "We open at nine." },
  ]);
  const wav = parseWav(Buffer.from(concluded.callRecording, "base64"));
  expect(wav.sampleRate).toBe(8000);
  expect(Math.abs(wav.samples.length / 8000 - (concluded.endedAt - concluded.startedAt) / 1000)).toBeLessThan(0.2);
  expect(rms(wav.samples)).toBeGreaterThan(300);
  // what the caller got: 20 ms PCMU packets, the agent's speech audible in them
  const audio = peer.received.filter((p) => p.payloadType === 0);
  expect(audio.length).toBeGreaterThan(100);
  expect(audio.every((p) => p.payload.length === 160)).toBe(true);
  expect(rms(peer.heard())).toBeGreaterThan(300);
  const started = world.hookBodies("call_started").find((b) => b.callId === concluded.callId);
  expect(started).toMatchObject({ transport: concluded.transport, startedAt: concluded.startedAt });
  const [task] = await world.tasks((t) => t.callId === concluded.callId);
  expect(task).toMatchObject({ status: "completed", transport: concluded.transport });
}, 60_000);

test.concurrent("PCMA, an anonymous caller, DTMF to the LLM, a tool webhook, the fallback number, and the agent hangs up", async () => {
  const assistant = await world.createAssistant({
    numberId: numbers.fallback,
    tools: [{ name: "lookup_order", serverUrl: `${tools.url}/orders` }],
    fake: {
      turns: [
        {
          userSays: "(keypad)",
          reply: { text: "Let me look.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] },
        },
        {
          userSays: "(keypad)",
          reply: { text: "Goodbye!", toolCalls: [{ name: "end_call", arguments: { reason: "done" } }] },
        },
      ],
    },
  });
  const peer = await startRtpPeer("PCMA");
  // a number nobody serves goes to the fallback number's assistant; the caller withholds its number
  const sipp = call("+15550200003", peer.port, "PCMA", `"Anonymous" <sip:anonymous@anonymous.invalid>`, [
    "Privacy: id",
    "P-Asserted-Identity: <sip:+15551110000@127.0.0.1>",
  ]);
  await eventually(() => peer.latched, "the bridge's first RTP packet");
  await Bun.sleep(300);
  for (const digit of "42#") {
    peer.dtmf(digit);
    await Bun.sleep(120);
  }
  await eventually(() => tools.requests.length > 0, "the tool webhook");
  await Bun.sleep(500);
  peer.dtmf("#");
  const result = await sipp;
  peer.stop();
  expect(result.logs.join("\n")).toContain("BRIDGE_HUNG_UP");
  expect(peer.received.some((p) => p.payloadType === 8)).toBe(true);
  expect(peer.received.every((p) => p.payloadType === 8)).toBe(true);

  const concluded = await concludedFor(assistant.id);
  const transport = { type: "sip", calledNumber: "+15550200003", callingNumber: "anonymous" };
  expect(concluded.transport).toEqual(transport);
  expect(JSON.parse(tools.requests[0]!.body.toString())).toEqual({
    type: "tool_webhook",
    name: "lookup_order",
    callId: concluded.callId,
    transport,
    parameters: { orderId: "42" },
  });
  const texts = concluded.messages.filter((m: any) => m.role === "USER").map((m: any) => m.text);
  expect(texts).toEqual(["The caller pressed 42# on the keypad.", "The caller pressed # on the keypad."]);
  const sent = assistant.fake.sessions[0]!.received.filter(
    (e: any) => e.type === "conversation.item.create" && e.item.type === "message",
  );
  expect(sent.map((e: any) => e.item.content[0].text)).toEqual(texts);
  // the withheld identity appears nowhere
  const everything = JSON.stringify([
    world.hookBodies("call_started"),
    world.hookBodies("call_concluded"),
    tools.requests.map((r) => r.body.toString()),
  ]);
  expect(everything).not.toContain("15551110000");
  const [task] = await world.tasks((t) => t.callId === concluded.callId);
  expect(task).toMatchObject({ status: "completed", transport });
}, 60_000);

test.concurrent("a trunk that keeps our contact in the Request-URI: the number comes from To", async () => {
  const assistant = await world.createAssistant({ numberId: numbers.plain, greeting: "Hi." });
  const peer = await startRtpPeer("PCMU");
  const result = await call("15550200002", peer.port, "PCMU", "<sip:5551234@127.0.0.1>", [], 1500);
  peer.stop();
  expect(result.code).toBe(0);
  const concluded = await concludedFor(assistant.id);
  expect(concluded.transport).toEqual({ type: "sip", calledNumber: "15550200002", callingNumber: "5551234" });
}, 30_000);

test.concurrent("a late offer (INVITE without SDP): we offer in the 200 OK, the caller answers in the ACK, and hears the agent", async () => {
  const greeting = "Hello, late caller.";
  const assistant = await world.createAssistant({
    numberId: numbers.late,
    greeting,
    fake: { onInstructions: () => ({ text: greeting }) },
  });
  const peer = await startRtpPeer("PCMU");
  const sipp = runSipp({
    scenario: "uac-late-offer.xml",
    trunkPort: world.trunk.port,
    service: "+15550200004",
    vars: { FROM: "<sip:+15557654321@127.0.0.1>", RTP_PORT: peer.port, CALL_MS: 4000 },
  });
  await eventually(() => rms(peer.heard()) > 300, "the agent's greeting");
  const result = await sipp;
  peer.stop();
  expect(result.code).toBe(0);
  expect(result.logs.join("\n")).toMatch(/OFFERED m=audio \d+ RTP\/AVP 0 8 101/);
  expect(result.logs.join("\n")).toContain("CALLER_HUNG_UP");
  expect(peer.received.filter((p) => p.payloadType === 0).length).toBeGreaterThan(50);
  const concluded = await concludedFor(assistant.id);
  expect(concluded.messages.map((m: any) => m.text)).toEqual([greeting]);
  const [task] = await world.tasks((t) => t.callId === concluded.callId);
  expect(task).toMatchObject({ status: "completed" });
}, 30_000);
