// Voicemail on a real outbound call: POST P/calls with `voicemail`, the bridge dials through Kamailio
// (the trunk) to a SIPp UAS whose RTP is the test's peer, and the peer plays an answering machine's
// greeting (espeak-ng) and a 1 kHz beep. hangup: our BYE, the task ends `voicemail`, the agent never
// spoke. leave_message: nothing from us until the beep has ended, then the message, then our BYE.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { muLawDecode } from "../../src/audio/g711";
import { rms } from "../../src/audio/pcm";
import { beep, concat } from "../helpers/answering-audio";
import { silence, speech } from "../helpers/speech";
import { freePort } from "../helpers/temporal";
import { startRtpPeer, type RtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { startSippUas, uasEnding } from "./helpers/sipp-uas";

let world: SipWorld;
let assistantId: string;
let fake: Awaited<ReturnType<SipWorld["createAssistant"]>>["fake"];
const callees = ["hangup", "message"] as const;
const port: Record<(typeof callees)[number], number> = {} as never;
const number: Record<(typeof callees)[number], string> = {} as never;
const messageText = "Hi Ada, this is Acme. Please call us back.";
let machine: Int16Array;
let beepEndMs: number;

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {});
  const dids: Record<string, string> = {};
  for (const [i, name] of callees.entries()) {
    port[name] = await freePort();
    number[name] = `+1555040000${i}`;
    dids[number[name].slice(1)] = `127.0.0.1:${port[name]}`;
  }
  const { numberId } = await world.registeredCredential({
    user: "vm",
    dids,
    number: "+15550409999",
    bridge: "vm",
    maxAgentTasks: 5,
  });
  const messageAudio = await speech(messageText, 24000);
  const created = await world.createAssistant({
    numberId,
    greeting: "Hello {{first_name}}, this is Acme.",
    fake: {
      onInstructions: (instructions) =>
        instructions.includes("call us back") ? { text: messageText, audio: messageAudio } : { text: instructions },
    },
  });
  assistantId = created.id;
  fake = created.fake;
  const greeting = concat(
    silence(300, 8000),
    await speech(
      "Hi, you have reached Ada. I can't take your call right now, please leave a message after the tone.",
      8000,
    ),
    silence(400, 8000),
    beep(1000, 500, 8000),
  );
  beepEndMs = (greeting.length / 8000) * 1000;
  machine = concat(greeting, silence(6000, 8000));
}, 90_000);
afterAll(async () => {
  await world?.stop();
});

const place = (body: Record<string, unknown>) =>
  world.tenant.org.post(`${world.tenant.P}/calls`, { assistantId, variables: { first_name: "Ada" }, ...body });
const ended = (id: string) =>
  eventually(
    async () => {
      const t = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${id}`)).body.data;
      return t.status === "completed" || t.status === "failed" ? t : null;
    },
    "the task to end",
    40_000,
  );
const concluded = (callId: string) =>
  eventually(() => world.hookBodies("call_concluded").find((b) => b.callId === callId), "call_concluded", 30_000);

/** When (ms after the peer began playing the greeting) our side first sent sound. */
function firstSoundMs(peer: RtpPeer): number | null {
  const audio = peer.received.filter((r) => r.payloadType === 0);
  const start = audio[0]?.at; // the peer starts playing on the bridge's first packet
  const loud = audio.find((r) => rms(muLawDecode(r.payload)) > 300);
  return start === undefined || !loud ? null : loud.at - start;
}

test("voicemail hangup: the machine's greeting and beep end the call as voicemail; the agent never spoke", async () => {
  const peer = await startRtpPeer("PCMU");
  peer.say(machine);
  const uas = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: peer.port, RING_MS: 100, ENDING: uasEnding.awaitBye },
    port.hangup,
  );
  const sessions = fake.sessions.length;
  const placed = await place({ to: number.hangup, voicemail: { action: "hangup" } });
  expect(placed.status).toBe(201);
  await uas.result;
  // what the machine had still to play when our BYE came: the beep (and all before it) were not reached
  const unplayedSec = peer.pending;
  const done = await ended(placed.body.data.id);
  expect((await uas.result).code).toBe(0); // it got our BYE
  peer.stop();
  expect(done).toMatchObject({ status: "completed", endedReason: "voicemail", sipStatus: 200, direction: "outbound" });
  expect(done.startedAt).not.toBeNull();
  expect(unplayedSec).toBeGreaterThan(machine.length / 8000 - beepEndMs / 1000);
  expect(firstSoundMs(peer)).toBeNull();
  const session = fake.sessions[sessions]!;
  expect(session.received.some((e: any) => e.type === "response.create")).toBe(false);
  expect(session.received.some((e: any) => e.type === "input_audio_buffer.append")).toBe(false);
  expect((await concluded(done.callId)).endedReason).toBe("voicemail");
}, 60_000);

test("voicemail leave_message: silent until the beep has ended, then the rendered message, then our BYE", async () => {
  const peer = await startRtpPeer("PCMU");
  peer.say(machine);
  const uas = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: peer.port, RING_MS: 100, ENDING: uasEnding.awaitBye },
    port.message,
  );
  const sessions = fake.sessions.length;
  const placed = await place({
    to: number.message,
    voicemail: { action: "leave_message", message: "Hi {{first_name}}, this is Acme. Please call us back." },
  });
  expect(placed.status).toBe(201);
  const done = await ended(placed.body.data.id);
  expect((await uas.result).code).toBe(0);
  peer.stop();
  expect(done).toMatchObject({ status: "completed", endedReason: "voicemail", sipStatus: 200 });
  const session = fake.sessions[sessions]!;
  const spoken = session.received.filter((e: any) => e.type === "response.create" && e.response?.instructions);
  expect(spoken).toHaveLength(1); // the message only: the greeting was never spoken
  expect((spoken[0] as any).response.instructions).toContain(messageText);
  const heardAt = firstSoundMs(peer);
  expect(heardAt).not.toBeNull();
  expect(heardAt!).toBeGreaterThanOrEqual(beepEndMs);
  // the whole message reached the callee before our BYE (about 2.5 s of speech)
  const heard = peer.heard();
  let loudFrames = 0;
  for (let i = 0; i + 160 <= heard.length; i += 160) if (rms(heard.subarray(i, i + 160)) > 300) loudFrames++;
  expect(loudFrames * 20).toBeGreaterThan(1500);
  const body = await concluded(done.callId);
  expect(body.endedReason).toBe("voicemail");
  expect(body.messages.some((m: any) => m.role === "ASSISTANT" && m.text?.includes("call us back"))).toBe(true);
}, 60_000);
