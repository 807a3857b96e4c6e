// Bridged transfer (method dial, and the fallback of a refused REFER) with real peers: SIPp calls in
// through Kamailio, the fake model calls transfer_call, the bridge speaks the message, then dials the
// destination through the same credential (Kamailio challenges that INVITE) to a SIPp UAS whose media
// is the test's RTP peer. Audio is checked by content: a tone from one person is heard by the other.
// Recordings go to object storage (a real SeaweedFS), as a transferred call's must too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parseWav } from "../../src/audio/wav";
import { beep } from "../helpers/answering-audio";
import { recordingFromBucket } from "../helpers/recording-bucket";
import { seaweedFs, type SeaweedFs } from "../helpers/seaweedfs";
import { freePort } from "../helpers/temporal";
import { startRtpPeer, type RtpPeer } from "./helpers/rtp-peer";
import { createTransferringAssistant, hangUpAfterTheAnswer } from "./helpers/transferring-assistant";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, startSipp, uacCallVars } from "./helpers/sipp";
import { startSippUas, uasEnding } from "./helpers/sipp-uas";
import { exchangeTones, expectTonesRecorded } from "./helpers/tone-exchange";
import { firstToneFrame, toneFrames } from "./helpers/tone-frames";

let world: SipWorld;
let store: SeaweedFs;
let trunkPort: number;
let credentialId: string;
let numberId: string;
const did = "+15550400001";
const destinations = ["answer", "busy", "never", "fallback", "warm", "gone", "busyHangup"] as const;
const port: Record<(typeof destinations)[number], number> = {} as never;
const number: Record<(typeof destinations)[number], string> = {} as never;

beforeAll(async () => {
  // recordings in object storage: a transferred call's goes to the bucket as any call's
  store = await seaweedFs();
  // both settle before either failure is thrown: a world started beside a store that failed is still
  // stopped by afterAll (else its worker outlived the file and took later files' activities)
  const [started, stored] = await Promise.allSettled([
    startSipWorld({ nobody: "unused" }, {}, store.env),
    store.start(),
  ]);
  if (started.status === "fulfilled") world = started.value;
  for (const outcome of [started, stored]) if (outcome.status === "rejected") throw outcome.reason;
  // one trunk for both legs: the caller's number routes to the registered bridge, the destinations'
  // numbers (challenged INVITEs from the bridge) to the SIPp UAS playing each
  const dids: Record<string, string> = { [did]: "desk" };
  for (const [i, name] of destinations.entries()) {
    port[name] = await freePort();
    number[name] = `+1555040009${i}`;
    dids[number[name].slice(1)] = `127.0.0.1:${port[name]}`;
  }
  const desk = await world.registeredCredential({
    user: "desk",
    dids,
    number: did,
    bridge: "dial",
    maxAgentTasks: 3,
    env: store.env,
  });
  ({ credentialId, numberId } = desk);
  trunkPort = desk.trunk.port;
}, 90_000);
afterAll(async () => {
  await world?.stop();
  await store?.close();
});

const greeting = "Hello, Acme desk.";
const message = "Putting you through, {{caller_number}}.";
const sorry = "Sorry, nobody could take the call.";

/** An assistant that asks for the transfer right after its greeting. */
const transferringAssistant = (destination: string, parameters: Record<string, unknown> = {}) =>
  createTransferringAssistant(world, { numberId, greeting, destination, message, parameters, afterFailure: sorry });

/** SIPp through the trunk, its media the peer; it hangs up `hangUpAfterMs` after the answer (or waits for our BYE). */
const callerOptions = (peer: RtpPeer, hangUpAfterMs: number | null) => ({
  scenario: "uac-call.xml",
  trunkPort: trunkPort,
  service: did,
  vars: uacCallVars(peer.port, hangUpAfterMs ?? 60_000),
  timeoutSeconds: 80,
});
/** The caller, run to its end. */
const caller = (peer: RtpPeer, hangUpAfterMs: number | null) => runSipp(callerOptions(peer, hangUpAfterMs));
/** The caller who hangs up when the test tells it to (a fixed talk time waited out what the test can see). */
const cuedCaller = (peer: RtpPeer) => startSipp(callerOptions(peer, null));

const concludedFor = (assistantId: string) =>
  eventually(
    async () => {
      const task = (await world.tasks((t) => t.assistantId === assistantId))[0];
      const done = task && (task.status === "completed" || task.status === "failed");
      const bodies = task ? world.hookBodies("call_concluded").filter((b) => b.callId === task.callId) : [];
      return done && bodies.length > 0 && { task, body: bodies[0], bodies };
    },
    "call_concluded",
    40_000,
  );

const activeTasks = async () => (await world.credential(credentialId)).activeAgentTasks as number;

test("dial: the destination answers, each person hears the other's tone, the assistant leaves; the destination hangs up and the caller gets our BYE", async () => {
  const assistant = await transferringAssistant(number.answer);
  const callerPeer = await startRtpPeer("PCMU");
  const targetPeer = await startRtpPeer("PCMU");
  const target = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: targetPeer.port, RING_MS: 300, ENDING: uasEnding.byeOnCue },
    port.answer,
  );
  const calling = caller(callerPeer, null);

  // the destination's leg is up once the bridge sends it RTP: both people speak a tone of their own
  await eventually(() => targetPeer.latched, "the second leg's media", 40_000);
  const session = await assistant.fake.nextSession();
  // one after the other, so that the recording (both sides mixed) holds each tone alone
  await exchangeTones(callerPeer, targetPeer);
  // the assistant's provider session is closed while the people talk; the call keeps its one slot
  await eventually(() => session.ws.readyState === 3 /* CLOSED */, "the provider session closed");
  expect(await activeTasks()).toBe(1);

  await target.hangUp();
  const [callerResult, targetResult] = await Promise.all([calling, target.result]);
  callerPeer.stop();
  targetPeer.stop();
  expect(targetResult.code, targetResult.output).toBe(0);
  expect(callerResult.code, callerResult.output).toBe(0);
  expect(callerResult.logs.join("\n")).toContain("BRIDGE_HUNG_UP");
  // the second leg went out through the credential (the trunk relays only an INVITE that passed its
  // digest challenge), From our number on the call
  expect(targetResult.messages).toMatch(/From: <sip:\+15550400001@127\.0\.0\.1>/);

  // the caller's stream went on across the hand-over: one run of sequence numbers, no jump
  const audio = callerPeer.received.filter((r) => r.payloadType === 0);
  const jumps = audio.slice(1).filter((r, i) => ((r.sequence - audio[i]!.sequence) & 0xffff) > 3);
  expect(jumps).toHaveLength(0);

  const { task, body, bodies } = await concludedFor(assistant.id);
  expect(bodies).toHaveLength(1);
  expect(body).toMatchObject({ endedReason: "transferred", transferredTo: number.answer });
  expect(task).toMatchObject({ status: "completed", endedReason: "transferred", transferredTo: number.answer });
  expect(JSON.stringify(body.messages.find((m: any) => m.type === "tool_result"))).toContain(
    `transferred to ${number.answer}`,
  );
  // the recording goes on after the hand-over, with both people in it. It is an object in the bucket:
  // the hook's base64 and the route's 302 both its bytes
  const stored = await recordingFromBucket(store, world.api, world.tenant, task.id);
  expect(Buffer.from(body.callRecording, "base64").equals(stored)).toBe(true);
  expect(body.recordingUrl).toStartWith(`${store.endpoint}/${store.bucket}/`);
  expectTonesRecorded(parseWav(stored).samples);
  await eventually(async () => (await activeTasks()) === 0, "the slot released");
  expect(world.hookBodies("call_concluded").filter((b) => b.callId === task.callId)).toHaveLength(1);
}, 120_000);

test("dial: the caller hangs up during the bridge and the destination gets our BYE", async () => {
  const assistant = await transferringAssistant(number.answer);
  const callerPeer = await startRtpPeer("PCMU");
  const targetPeer = await startRtpPeer("PCMU");
  const target = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: targetPeer.port, RING_MS: 300, ENDING: uasEnding.awaitBye },
    port.answer,
  );
  const calling = await cuedCaller(callerPeer);
  // the caller hangs up once the legs are joined
  await eventually(() => targetPeer.latched, "the second leg's media", 40_000);
  await calling.hangUp();
  const callerResult = await calling.result;
  const targetResult = await target.result;
  callerPeer.stop();
  targetPeer.stop();
  expect(callerResult.logs.join("\n"), callerResult.output).toContain("CALLER_HUNG_UP");
  // the UAS passes only once our BYE came and it answered it
  expect(targetResult.code, targetResult.output).toBe(0);
  expect(targetResult.messages).toMatch(/BYE sip:/);
  const { task, bodies } = await concludedFor(assistant.id);
  expect(bodies).toHaveLength(1);
  expect(task).toMatchObject({ status: "completed", endedReason: "transferred", transferredTo: number.answer });
  await eventually(async () => (await activeTasks()) === 0, "the slot released");
}, 120_000);

for (const [name, callee, scenario, vars, why] of [
  ["busy (486)", "busy", "uas-reject.xml", { STATUS: 486, REASON: "Busy Here" }, "the destination answered 486 (busy)"],
  ["never answering", "never", "uas-never-answer.xml", { WAIT_MS: 30_000 }, "did not answer within 5 s"],
] as const) {
  test(`dial: a destination ${name} returns to the assistant with the reason in the tool result`, async () => {
    const assistant = await transferringAssistant(number[callee], { ringTimeoutSeconds: 5 });
    const callerPeer = await startRtpPeer("PCMU");
    const target = await startSippUas(scenario, vars, port[callee]);
    const calling = await cuedCaller(callerPeer);
    await hangUpAfterTheAnswer(calling, callerPeer, await assistant.fake.nextSession());
    const callerResult = await calling.result;
    callerPeer.stop();
    target.stop();
    expect(callerResult.logs.join("\n"), callerResult.output).toContain("CALLER_HUNG_UP");
    const { task, body } = await concludedFor(assistant.id);
    expect(body.endedReason).toBe("hangup");
    expect(task.transferredTo).toBeNull();
    expect(JSON.stringify(body.messages.find((m: any) => m.type === "tool_result"))).toContain(why);
    // the assistant went on after the failed transfer
    expect(body.messages.some((m: any) => m.text === sorry)).toBe(true);
    await eventually(async () => (await activeTasks()) === 0, "the slot released");
  }, 120_000);
}

test("dial: a busy destination with onFailure hangup ends the call, and the caller gets our BYE", async () => {
  const assistant = await transferringAssistant(number.busyHangup, { ringTimeoutSeconds: 5, onFailure: "hangup" });
  const callerPeer = await startRtpPeer("PCMU");
  const target = await startSippUas("uas-reject.xml", { STATUS: 486, REASON: "Busy Here" }, port.busyHangup);
  // the caller waits up to 40 s for a BYE of ours before it hangs up itself
  const callerResult = await caller(callerPeer, 40_000);
  const targetResult = await target.result;
  callerPeer.stop();
  expect(targetResult.code, targetResult.output).toBe(0);
  expect(callerResult.logs.join("\n"), callerResult.output).toContain("BRIDGE_HUNG_UP");
  const { task, body, bodies } = await concludedFor(assistant.id);
  expect(bodies).toHaveLength(1);
  expect(body.endedReason).toBe("assistant-ended");
  expect(task).toMatchObject({ status: "completed", endedReason: "assistant-ended", transferredTo: null });
  expect(task.error).toContain("the destination answered 486 (busy)");
  await eventually(async () => (await activeTasks()) === 0, "the slot released");
}, 120_000);

test("REFER refused with 501: the bridge falls back to dialling the destination and joins the legs", async () => {
  const assistant = await transferringAssistant(number.fallback, { method: "refer" });
  const callerPeer = await startRtpPeer("PCMU");
  const targetPeer = await startRtpPeer("PCMU");
  const target = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: targetPeer.port, RING_MS: 300, ENDING: uasEnding.byeOnCue },
    port.fallback,
  );
  const calling = runSipp({
    scenario: "uac-transferee.xml",
    trunkPort: trunkPort,
    service: did,
    vars: {
      RTP_PORT: callerPeer.port,
      REFER_STATUS: "501 Not Implemented",
      AFTER_REFER: "waitbye",
      NOTIFY_DELAY_MS: 0,
      FINAL: "200 OK",
      CALL_MS: 40_000,
    },
    timeoutSeconds: 80,
  });
  await eventually(() => targetPeer.latched, "the second leg's media", 40_000);
  targetPeer.say(beep(1200, 2000, 8000));
  await eventually(() => toneFrames(callerPeer.heard(), 1200) >= 25, "the destination's tone at the caller", 20_000);
  // the destination hangs up once heard (a fixed talk time raced the wait above on a loaded machine)
  await target.hangUp();
  const [callerResult, targetResult] = await Promise.all([calling, target.result]);
  callerPeer.stop();
  targetPeer.stop();
  expect(callerResult.code, callerResult.output).toBe(0);
  const logs = callerResult.logs.join("\n");
  expect(logs).toMatch(/REFER_TO\s+<?sip:15550400093@127\.0\.0\.1/);
  // the destination hung up: the caller got our BYE
  expect(logs).toContain("BRIDGE_HUNG_UP");
  expect(targetResult.code, targetResult.output).toBe(0);
  const { task, bodies } = await concludedFor(assistant.id);
  expect(bodies).toHaveLength(1);
  expect(task).toMatchObject({ status: "completed", endedReason: "transferred", transferredTo: number.fallback });
}, 120_000);

// a summary long enough to be heard for a while (the fake speaks 12 ms a character)
const brief =
  "The caller, Ada, wants to move the delivery of order 42 to her office on Friday morning, and asked whether the courier can call ahead before arriving at the building.";

test("warm: the human hears the assistant's summary while the caller hears the hold tone, then the legs are joined", async () => {
  world.chat.summary = { ...world.chat.summary, shortSummary: brief };
  const assistant = await transferringAssistant(number.warm, { mode: "warm", method: "refer" });
  const callerPeer = await startRtpPeer("PCMU");
  const targetPeer = await startRtpPeer("PCMU");
  const target = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: targetPeer.port, RING_MS: 300, ENDING: uasEnding.byeOnCue },
    port.warm,
  );
  // a warm transfer dials (no REFER, whatever the method): the caller must see none
  const calling = caller(callerPeer, null);
  const session = await assistant.fake.nextSession();
  // the summary (the fake's stand-in speech: a 300 Hz tone) at the human, the hold tone at the caller
  await eventually(() => toneFrames(targetPeer.heard(), 300) >= 25, "the summary at the destination", 40_000);
  await eventually(() => toneFrames(callerPeer.heard(), 440) >= 10, "the hold tone at the caller", 20_000);
  const spoken = session.received.filter((e: any) => e.type === "response.create" && e.response?.instructions);
  expect(spoken.some((e: any) => e.response.instructions.includes(`${brief} Connecting you now.`))).toBe(true);
  // the human talks on (nothing of it reaches the caller before the legs are joined); once joined,
  // the caller hears it. Long enough to outlast the summary however slow the machine: the human hangs
  // up (and its peer stops) once the caller heard it
  targetPeer.say(beep(1200, 30_000, 8000));
  await eventually(() => toneFrames(callerPeer.heard(), 1200) >= 25, "the destination's tone at the caller", 20_000);
  // the caller heard no summary: no 300 Hz after the hold tone began
  const heard = callerPeer.heard();
  const holdStart = firstToneFrame(heard, 440);
  expect(toneFrames(heard.subarray(holdStart * 160), 300)).toBe(0);

  await target.hangUp();
  const [callerResult, targetResult] = await Promise.all([calling, target.result]);
  callerPeer.stop();
  targetPeer.stop();
  expect(callerResult.code, callerResult.output).toBe(0);
  expect(callerResult.logs.join("\n")).toContain("BRIDGE_HUNG_UP");
  expect(callerResult.messages).not.toMatch(/^REFER /m);
  expect(targetResult.code, targetResult.output).toBe(0);
  const { task, bodies } = await concludedFor(assistant.id);
  expect(bodies).toHaveLength(1);
  expect(task).toMatchObject({ status: "completed", endedReason: "transferred", transferredTo: number.warm });
  await eventually(async () => (await activeTasks()) === 0, "the slot released");
}, 120_000);

test("warm: the human hangs up during the summary; the caller stays with the assistant, told why", async () => {
  world.chat.summary = { ...world.chat.summary, shortSummary: brief };
  const assistant = await transferringAssistant(number.gone, { mode: "warm" });
  const callerPeer = await startRtpPeer("PCMU");
  const targetPeer = await startRtpPeer("PCMU");
  const target = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: targetPeer.port, RING_MS: 300, ENDING: uasEnding.byeAfter(300) },
    port.gone,
  );
  const calling = await cuedCaller(callerPeer);
  await hangUpAfterTheAnswer(calling, callerPeer, await assistant.fake.nextSession());
  const callerResult = await calling.result;
  const targetResult = await target.result;
  callerPeer.stop();
  targetPeer.stop();
  expect(targetResult.code, targetResult.output).toBe(0);
  // the caller was not hung up on: it hung up itself, after the assistant came back
  expect(callerResult.logs.join("\n"), callerResult.output).toContain("CALLER_HUNG_UP");
  const { task, body } = await concludedFor(assistant.id);
  expect(body.endedReason).toBe("hangup");
  expect(task.transferredTo).toBeNull();
  expect(JSON.stringify(body.messages.find((m: any) => m.type === "tool_result"))).toContain(
    "hung up before the caller was put through",
  );
  expect(body.messages.some((m: any) => m.text === sorry)).toBe(true);
}, 120_000);
