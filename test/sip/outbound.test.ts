// Outbound calls end to end: POST P/calls, the bridge holding the credential's lease sends the INVITE
// through Kamailio as the trunk (a 407 digest challenge on every INVITE), which routes each number to
// a SIPp UAS playing the callee: answer (the callee's media is the test's RTP peer), busy, decline, a
// trunk failure, never answering, an unknown number. Every ending closes the task with its endedReason
// and sipStatus, frees the slot and writes call_concluded (call_started only for an answered call).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import { freePort } from "../helpers/temporal";
import { speech } from "../helpers/speech";
import { startRtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { startSippUas, uasEnding } from "./helpers/sipp-uas";

let world: SipWorld;
let credentialId: string;
let tightCredentialId: string;
let callerNumberId: string;
let tightNumberId: string;
let assistantId: string;
let fake: Awaited<ReturnType<SipWorld["createAssistant"]>>["fake"];
const callees = ["answer", "busy", "decline", "broken", "never", "ringing", "full", "lateAnswer", "lateRing"] as const;
const port: Record<(typeof callees)[number], number> = {} as never;
const number: Record<(typeof callees)[number], string> = {} as never;
const greeting = "Hi {{first_name}}, this is Acme about order {{order}}.";

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {}); // its trunk is the inbound one, unused here
  const dids: Record<string, string> = {};
  for (const [i, name] of callees.entries()) {
    port[name] = await freePort();
    number[name] = `+155503000${String(i).padStart(2, "0")}`;
    // the late ones: the trunk sends no 100 of its own, so the bridge hears nothing before the callee
    dids[number[name].slice(1)] = `127.0.0.1:${port[name]}${name.startsWith("late") ? ";silent" : ""}`;
  }
  const trunk = await world.startTrunk(
    { out: "outpass", tight: "tightpass" },
    dids,
    "127.0.0.1",
    "kamailio-outbound.cfg",
  );
  credentialId = await world.createCredential("out", "outpass", 5, trunk);
  tightCredentialId = await world.createCredential("tight", "tightpass", 1, trunk);
  callerNumberId = await world.createNumber(credentialId, "+15550309999");
  tightNumberId = await world.createNumber(tightCredentialId, "+15550308888");
  const greetingText = "Hi Ada, this is Acme about order 42.";
  const greetingAudio = await speech(greetingText, 24000);
  const created = await world.createAssistant({
    numberId: callerNumberId,
    greeting,
    systemPrompt:
      'Remind {{first_name}} of order {{order}}. Reply as JSON: {"ok": true, "items": [{"id": 1}]}{{unknown}}.',
    fake: { onInstructions: () => ({ text: greetingText, audio: greetingAudio }) },
  });
  assistantId = created.id;
  fake = created.fake;
  await world.startBridge("out");
  for (const id of [credentialId, tightCredentialId]) await world.registered(id);
}, 90_000);
afterAll(async () => {
  await world?.stop();
});

const place = (body: Record<string, unknown>) =>
  world.tenant.org.post(`${world.tenant.P}/calls`, { assistantId, ...body });
const task = async (id: string) => (await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${id}`)).body.data;
const ended = (id: string) =>
  eventually(
    async () => {
      const t = await task(id);
      return t.status === "completed" || t.status === "failed" ? t : null;
    },
    "the task to end",
    40_000,
  );
const concluded = (callId: string) =>
  eventually(() => world.hookBodies("call_concluded").find((b) => b.callId === callId), "call_concluded", 30_000);

test("answered: the INVITE passes the trunk's digest challenge; silence, then the greeting rendered with the call's variables; the callee hangs up", async () => {
  const peer = await startRtpPeer("PCMU");
  const uas = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: peer.port, RING_MS: 300, ENDING: uasEnding.byeOnCue },
    port.answer,
  );
  const placed = await place({ to: number.answer, variables: { first_name: "Ada", order: "42" } });
  expect(placed.status).toBe(201);
  const offered = placed.body.data;
  expect(offered).toMatchObject({
    direction: "outbound",
    status: "offered",
    endedReason: null,
    assistantId,
    credentialId,
    phoneNumberId: callerNumberId,
    transport: { type: "sip", calledNumber: number.answer, callingNumber: "+15550309999" },
  });

  // the callee says nothing: the greeting comes anyway, rendered, and is heard
  await eventually(() => rms(peer.heard()) > 300, "the greeting's audio", 20_000);
  const session = await fake.nextSession();
  const update = session.received.find((e: any) => e.type === "session.update") as any;
  expect(update.session.instructions).toBe(
    'Remind Ada of order 42. Reply as JSON: {"ok": true, "items": [{"id": 1}]}.',
  );
  const greeted = session.received.filter((e: any) => e.type === "response.create" && e.response?.instructions);
  expect(greeted).toHaveLength(1);
  expect((greeted[0] as any).response.instructions).toContain("Hi Ada, this is Acme about order 42.");

  // the callee hangs up once it heard the greeting (a fixed talk time raced the greeting's 2 s wait
  // for the callee and its audio on a loaded machine)
  await uas.hangUp();
  const done = await ended(offered.id);
  const sipp = await uas.result;
  peer.stop();
  expect(sipp.code).toBe(0);
  expect(done).toMatchObject({ status: "completed", endedReason: "hangup", sipStatus: 200, direction: "outbound" });
  expect(done.variables).toMatchObject({
    first_name: "Ada",
    order: "42",
    direction: "outbound",
    call_id: offered.callId,
    caller_number: "+15550309999",
    called_number: number.answer,
  });
  const started = await eventually(
    () => world.hookBodies("call_started").find((b) => b.callId === offered.callId),
    "call_started",
  );
  expect(started.direction).toBe("outbound");
  const body = await concluded(offered.callId);
  expect(body).toMatchObject({ direction: "outbound", endedReason: "hangup", variables: { first_name: "Ada" } });
  expect(body.messages.some((m: any) => m.role === "ASSISTANT" && m.text?.includes("Hi Ada"))).toBe(true);
  // the From was the caller id at the trunk's host
  expect(sipp.messages).toMatch(/From: <sip:\+15550309999@127\.0\.0\.1>/);
}, 60_000);

for (const [name, status, reason, endedReason, taskStatus] of [
  ["busy", 486, "Busy Here", "busy", "completed"],
  ["decline", 603, "Decline", "declined", "completed"],
  ["broken", 502, "Bad Gateway", "failed", "failed"],
] as const) {
  test(`a ${status} from the callee: endedReason ${endedReason}, sipStatus kept, call_concluded without call_started`, async () => {
    const uas = await startSippUas("uas-reject.xml", { STATUS: status, REASON: reason }, port[name]);
    const placed = await place({ to: number[name] });
    expect(placed.status).toBe(201);
    const done = await ended(placed.body.data.id);
    expect((await uas.result).code).toBe(0);
    expect(done).toMatchObject({ status: taskStatus, endedReason, sipStatus: status, startedAt: null });
    const body = await concluded(done.callId);
    expect(body).toMatchObject({ direction: "outbound", endedReason });
    expect(body.startedAt).toBeUndefined();
    expect(world.hookBodies("call_started").some((b) => b.callId === done.callId)).toBe(false);
  }, 60_000);
}

test("an unknown number (the trunk's 404) is unreachable", async () => {
  const placed = await place({ to: "+15550399999" });
  const done = await ended(placed.body.data.id);
  expect(done).toMatchObject({ status: "completed", endedReason: "unreachable", sipStatus: 404 });
});

// the next four each wait out a 5 s ring time-out (the least the API takes), each on a callee of its own:
// they run at once (three of the "out" credential's five slots, the tight credential's one)
test.concurrent("never answered: CANCEL at the ring time-out, no-answer with 487", async () => {
  const uas = await startSippUas("uas-never-answer.xml", { WAIT_MS: 30_000 }, port.never);
  const placed = await place({ to: number.never, ringTimeoutSeconds: 5 });
  const done = await ended(placed.body.data.id);
  expect((await uas.result).code).toBe(0); // it got our CANCEL
  expect(done).toMatchObject({ status: "completed", endedReason: "no-answer", sipStatus: 487 });
  expect((await concluded(done.callId)).endedReason).toBe("no-answer");
}, 60_000);

// RFC 3261: with nothing back at the ring time-out the INVITE cannot be cancelled yet (§9.1), so the
// call is given up; whatever comes later must not leave the callee ringing, or in a dialog nobody owns
test.concurrent("answered after the ring time-out with nothing before it: the 200 is ACKed and ended with our BYE", async () => {
  const peer = await startRtpPeer("PCMU");
  const uas = await startSippUas(
    "uas-answer-no-ringing.xml",
    { DELAY_MS: 7000, RTP_PORT: peer.port, ENDING: uasEnding.ackAndBye },
    port.lateAnswer,
  );
  const placed = await place({ to: number.lateAnswer, ringTimeoutSeconds: 5 });
  // given up at the time-out: the trunk answered nothing at all
  const done = await ended(placed.body.data.id);
  expect(done).toMatchObject({ status: "failed", endedReason: "failed", sipStatus: null });
  // the UAS passes only once its 200 was ACKed and our BYE came
  const sipp = await uas.result;
  peer.stop();
  expect(sipp.code, sipp.output).toBe(0);
  expect(sipp.messages).toMatch(/ACK sip:/);
  expect(sipp.messages).toMatch(/BYE sip:/);
  expect(world.hookBodies("call_started").some((b) => b.callId === done.callId)).toBe(false);
}, 60_000);

test.concurrent("ringing only after the ring time-out with nothing before it: our CANCEL follows the 180", async () => {
  const uas = await startSippUas("uas-never-answer.xml", { DELAY_MS: 7000, WAIT_MS: 20_000 }, port.lateRing);
  const placed = await place({ to: number.lateRing, ringTimeoutSeconds: 5 });
  const done = await ended(placed.body.data.id);
  expect(done).toMatchObject({ status: "failed", endedReason: "failed", sipStatus: null });
  const sipp = await uas.result;
  expect(sipp.code, sipp.output).toBe(0); // it got our CANCEL, and the ACK of its 487
  expect(sipp.messages).toMatch(/CANCEL sip:/);
}, 60_000);

test.concurrent("maxAgentTasks is shared: a full credential answers 429 with Retry-After, and its slot frees when the call ends", async () => {
  const uas = await startSippUas("uas-never-answer.xml", { WAIT_MS: 30_000 }, port.full);
  const first = await place({ to: number.full, phoneNumberId: tightNumberId, ringTimeoutSeconds: 5 });
  expect(first.status).toBe(201);
  expect(first.body.data.credentialId).toBe(tightCredentialId);
  const second = await place({ to: number.full, phoneNumberId: tightNumberId });
  expect(second.status).toBe(429);
  expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
  await ended(first.body.data.id);
  await uas.result;
  const uasAgain = await startSippUas("uas-reject.xml", { STATUS: 486, REASON: "Busy Here" }, port.full);
  const third = await place({ to: number.full, phoneNumberId: tightNumberId });
  expect(third.status).toBe(201);
  await ended(third.body.data.id);
  await uasAgain.result;
}, 60_000);

test("hang-up through the API: CANCEL while ringing (canceled), then 409", async () => {
  const uas = await startSippUas("uas-never-answer.xml", { WAIT_MS: 30_000 }, port.ringing);
  const placed = await place({ to: number.ringing });
  const id = placed.body.data.id;
  await eventually(async () => (await task(id)).status === "offered", "the offer");
  await Bun.sleep(1500); // long enough for the INVITE to pass the trunk and the callee to ring
  const hung = await world.tenant.org.post(`${world.tenant.P}/agent-tasks/${id}/hangup`);
  expect(hung.status).toBe(200);
  const done = await ended(id);
  expect((await uas.result).code).toBe(0);
  expect(done).toMatchObject({ endedReason: "canceled", sipStatus: 487 });
  const again = await world.tenant.org.post(`${world.tenant.P}/agent-tasks/${id}/hangup`);
  expect(again.status).toBe(409);
}, 60_000);

test("hang-up through the API of an answered call: our BYE, canceled", async () => {
  const peer = await startRtpPeer("PCMU");
  const uas = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: peer.port, RING_MS: 100, ENDING: uasEnding.awaitBye },
    port.answer,
  );
  const placed = await place({ to: number.answer });
  const id = placed.body.data.id;
  await eventually(async () => (await task(id)).status === "active", "the answer");
  const hung = await world.tenant.org.post(`${world.tenant.P}/agent-tasks/${id}/hangup`);
  expect(hung.status).toBe(200);
  const done = await ended(id);
  expect((await uas.result).code).toBe(0); // it got our BYE
  peer.stop();
  expect(done).toMatchObject({ status: "completed", endedReason: "canceled", sipStatus: 200 });
}, 60_000);

test("bad input is a 400 naming the field; unknown assistant or number 404", async () => {
  const { org, P } = world.tenant;
  const cases: [Record<string, unknown>, string][] = [
    [{ assistantId, to: "5550001111" }, "to"],
    [{ assistantId, to: "+05550001111" }, "to"],
    [{ assistantId, to: "sip:bob@10.1.2.3" }, "to"],
    [{ assistantId, to: "sip:bob@169.254.169.254:5060" }, "to"],
    [{ assistantId, agentId: assistantId, to: number.busy }, "agentId"],
    [{ to: number.busy }, "assistantId"],
    [{ assistantId, to: number.busy, ringTimeoutSeconds: 4 }, "ringTimeoutSeconds"],
    [{ assistantId, to: number.busy, maxDurationSeconds: 7201 }, "maxDurationSeconds"],
    [{ assistantId, to: number.busy, variables: { a: 1 } }, "variables.a"],
    [{ assistantId, to: number.busy, variables: { a: "x".repeat(1001) } }, "variables.a"],
    [
      {
        assistantId,
        to: number.busy,
        variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, "x"])),
      },
      "variables",
    ],
    [{ assistantId, to: number.busy, voicemail: { action: "shout" } }, "voicemail.action"],
    [{ assistantId, to: number.busy, extra: true }, "extra"],
  ];
  for (const [body, field] of cases) {
    const res = await org.post(`${P}/calls`, body);
    expect({ body, status: res.status }).toEqual({ body, status: 400 });
    expect(res.body.errors.map((e: any) => e.field)).toContain(field);
  }
  const unknown = "00000000-0000-4000-8000-000000000000";
  expect((await org.post(`${P}/calls`, { assistantId: unknown, to: number.busy })).status).toBe(404);
  expect((await org.post(`${P}/calls`, { assistantId, to: number.busy, phoneNumberId: unknown })).status).toBe(404);
  // nothing was offered for any of them
  expect((await world.tasks((t) => t.status === "offered")).length).toBe(0);
});
