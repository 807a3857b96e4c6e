// A bridged transfer (method dial) on a call we placed: POST P/calls, the callee (SIPp through
// Kamailio, which challenges every INVITE of the credential) answers and stays silent, the assistant
// greets and calls transfer_call, the bridge dials the destination (another SIPp UAS, challenged too)
// and joins the legs. Audio is checked by content: a tone from one person is heard by the other.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parseWav } from "../../src/audio/wav";
import { beep } from "../helpers/answering-audio";
import { freePort } from "../helpers/temporal";
import { startRtpPeer } from "./helpers/rtp-peer";
import { createTransferringAssistant } from "./helpers/transferring-assistant";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { startSippUas, uasEnding } from "./helpers/sipp-uas";
import { exchangeTones, expectTonesRecorded } from "./helpers/tone-exchange";
import { toneFrames } from "./helpers/tone-frames";

let world: SipWorld;
let credentialId: string;
let numberId: string;
const callerId = "+15550600999";
const callee = "+15550600001";
const destination = "+15550600002";
const port = { callee: 0, destination: 0 };

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {}); // its trunk is the inbound one, unused here
  port.callee = await freePort();
  port.destination = await freePort();
  ({ credentialId, numberId } = await world.registeredCredential({
    user: "out",
    dids: { [callee.slice(1)]: `127.0.0.1:${port.callee}`, [destination.slice(1)]: `127.0.0.1:${port.destination}` },
    number: callerId,
    bridge: "out-transfer",
    maxAgentTasks: 3,
  }));
}, 90_000);
afterAll(async () => {
  await world?.stop();
});

const greeting = "Hi, this is Acme about your order.";
const activeTasks = async () => (await world.credential(credentialId)).activeAgentTasks as number;

/** An assistant whose greeting ends with the transfer to `destination` (method dial). */
const transferringAssistant = () =>
  createTransferringAssistant(world, {
    numberId,
    greeting,
    destination,
    message: "Connecting you to {{called_number}}'s agent.",
  });

const place = async (assistantId: string, extra: Record<string, unknown> = {}) => {
  const placed = await world.tenant.org.post(`${world.tenant.P}/calls`, { assistantId, to: callee, ...extra });
  expect(placed.status).toBe(201);
  return placed.body.data as { id: string; callId: string };
};
const concluded = (callId: string) =>
  eventually(() => world.hookBodies("call_concluded").find((b) => b.callId === callId), "call_concluded", 40_000);
const task = async (id: string) => (await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${id}`)).body.data;

test("outbound call, dial transfer: the callee and the destination hear each other, the call ends transferred with direction outbound", async () => {
  const { id: assistantId, fake } = await transferringAssistant();
  const calleePeer = await startRtpPeer("PCMU");
  const targetPeer = await startRtpPeer("PCMU");
  // the callee says nothing (the greeting comes after 2 s of silence) and waits for our BYE
  const calleeSipp = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: calleePeer.port, RING_MS: 200, ENDING: uasEnding.awaitBye },
    port.callee,
  );
  const target = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: targetPeer.port, RING_MS: 300, ENDING: uasEnding.byeOnCue },
    port.destination,
  );
  const { id: taskId, callId } = await place(assistantId);

  await eventually(() => targetPeer.latched, "the second leg's media", 40_000);
  const session = await fake.nextSession();
  // one after the other, so that the recording (both sides mixed) holds each tone alone
  await exchangeTones(calleePeer, targetPeer);
  await eventually(() => session.ws.readyState === 3 /* CLOSED */, "the provider session closed");
  // the bridged call keeps its one slot, and only one
  expect(await activeTasks()).toBe(1);

  // the destination hangs up: the callee gets our BYE
  await target.hangUp();
  const [calleeResult, targetResult] = await Promise.all([calleeSipp.result, target.result]);
  calleePeer.stop();
  targetPeer.stop();
  expect(targetResult.code, targetResult.output).toBe(0);
  expect(calleeResult.code, calleeResult.output).toBe(0);
  expect(calleeResult.messages).toMatch(/^BYE sip:/m);
  // both INVITEs went through the credential (the trunk relays only what passed its challenge); the
  // second leg's From is our caller id, not the callee
  expect(targetResult.messages).toMatch(/From: <sip:\+15550600999@127\.0\.0\.1>/);

  const body = await concluded(callId);
  expect(body).toMatchObject({ direction: "outbound", endedReason: "transferred", transferredTo: destination });
  expect(world.hookBodies("call_concluded").filter((b) => b.callId === callId)).toHaveLength(1);
  expect(await task(taskId)).toMatchObject({
    status: "completed",
    direction: "outbound",
    endedReason: "transferred",
    transferredTo: destination,
    sipStatus: 200,
  });
  const spoken = body.messages.filter((m: any) => m.role === "ASSISTANT").map((m: any) => m.text);
  expect(spoken).toContain(`Connecting you to ${callee}'s agent.`);
  expect(JSON.stringify(body.messages.find((m: any) => m.type === "tool_result"))).toContain(
    `transferred to ${destination}`,
  );
  expectTonesRecorded(parseWav(Buffer.from(body.callRecording, "base64")).samples);
  await eventually(async () => (await activeTasks()) === 0, "the slot released");
}, 120_000);

/** Both people on the line, each answering our BYE; resolves once the legs are joined. */
async function bridgedOutboundCall(extra: Record<string, unknown>) {
  const { id: assistantId } = await transferringAssistant();
  const calleePeer = await startRtpPeer("PCMU");
  const targetPeer = await startRtpPeer("PCMU");
  const ending = { RING_MS: 200, ENDING: uasEnding.awaitBye };
  const calleeSipp = await startSippUas("uas-answer.xml", { RTP_PORT: calleePeer.port, ...ending }, port.callee);
  const target = await startSippUas("uas-answer.xml", { RTP_PORT: targetPeer.port, ...ending }, port.destination);
  const placed = await place(assistantId, extra);
  targetPeer.say(beep(1200, 1000, 8000));
  await eventually(() => toneFrames(calleePeer.heard(), 1200) >= 10, "the destination's tone at the callee", 40_000);
  const results = async () => {
    const both = await Promise.all([calleeSipp.result, target.result]);
    calleePeer.stop();
    targetPeer.stop();
    return both;
  };
  return { ...placed, results };
}

/** Both SIPp UAS (callee and destination) pass only once our BYE came and they answered it. */
async function bothLegsGotOurBye(call: {
  results(): Promise<{ code: number | null; output: string; messages: string }[]>;
}) {
  for (const result of await call.results()) {
    expect(result.code, result.output).toBe(0);
    expect(result.messages).toMatch(/^BYE sip:/m);
  }
}

test("outbound call, dial transfer: maxDurationSeconds bounds the bridged call too, both people get our BYE", async () => {
  const call = await bridgedOutboundCall({ maxDurationSeconds: 10 });
  await bothLegsGotOurBye(call);
  // the caller was with the destination when the time ran out: still a transfer
  expect(await concluded(call.callId)).toMatchObject({
    direction: "outbound",
    endedReason: "transferred",
    transferredTo: destination,
  });
  await eventually(async () => (await activeTasks()) === 0, "the slot released");
}, 120_000);

test("outbound call, dial transfer: a hang-up through the API ends both legs", async () => {
  const call = await bridgedOutboundCall({});
  const hung = await world.tenant.org.post(`${world.tenant.P}/agent-tasks/${call.id}/hangup`);
  expect(hung.status).toBe(200);
  await bothLegsGotOurBye(call);
  // the caller was with the destination: the call was transferred, whoever ended it
  expect(await task(call.id)).toMatchObject({
    status: "completed",
    endedReason: "transferred",
    transferredTo: destination,
  });
  expect((await concluded(call.callId)).direction).toBe("outbound");
  await eventually(async () => (await activeTasks()) === 0, "the slot released");
}, 120_000);
