// RTP destinations pass the outbound guard like signalling does (docs/security.md): a bridge allowed
// 127.0.0.2 only (OUTBOUND_ALLOW_CIDRS), its trunk Kamailio on 127.0.0.2, the far ends (SIPp) on
// 127.0.0.2 too. An SDP naming 127.0.0.2 gets our RTP; one naming 127.0.0.3 (loopback, refused) gets
// none: a callee's answer (ACKed and ended with our BYE), its early answer (our CANCEL), a caller's
// offer (488) or re-INVITE (488, our BYE), a transferee's answer (the transfer fails). Each refusal is
// the task's error (the transfer's: its tool result).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { freePort } from "../helpers/temporal";
import { startRtpPeer, type RtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, startSipp, uacCallVars } from "./helpers/sipp";
import { startSippUas, uasEnding } from "./helpers/sipp-uas";
import { createTransferringAssistant, hangUpAfterTheAnswer } from "./helpers/transferring-assistant";

const allowed = "127.0.0.2";
const refused = "127.0.0.3";
const refusal = `RTP destination refused: ${refused} is in the loopback range`;
const did = "+15550800000";
const callees = ["allowed", "answer", "early", "transferee"] as const;
const port: Record<(typeof callees)[number], number> = {} as never;
const number: Record<(typeof callees)[number], string> = {} as never;

let world: SipWorld;
let trunkPort: number;
let numberId: string;
let assistantId: string;
/** listens where the refused SDPs point: nothing of ours may ever reach it */
let refusedPeer: RtpPeer;

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {});
  const dids: Record<string, string> = { [did]: "media" };
  for (const [i, name] of callees.entries()) {
    port[name] = await freePort();
    number[name] = `+1555080000${i + 1}`;
    dids[number[name].slice(1)] = `${allowed}:${port[name]}`;
  }
  const desk = await world.registeredCredential({
    user: "media",
    dids,
    number: did,
    bridge: "rtp-destination",
    maxAgentTasks: 3,
    host: allowed,
    env: { OUTBOUND_ALLOW_CIDRS: `${allowed}/32` },
  });
  ({ numberId } = desk);
  trunkPort = desk.trunk.port;
  assistantId = (await world.createAssistant({ numberId, greeting: "Hello, this is Acme." })).id;
  refusedPeer = await startRtpPeer("PCMU", refused);
}, 90_000);
afterAll(async () => {
  refusedPeer?.stop();
  await world?.stop();
});

const place = async (to: string) => {
  const placed = await world.tenant.org.post(`${world.tenant.P}/calls`, { assistantId, to });
  expect(placed.status).toBe(201);
  return placed.body.data.id as string;
};
const ended = (id: string) =>
  eventually(
    async () => {
      const task = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${id}`)).body.data;
      return task.status === "completed" || task.status === "failed" ? task : null;
    },
    "the task to end",
    40_000,
  );

test("a callee whose SDP names an allowed address gets our RTP", async () => {
  const peer = await startRtpPeer("PCMU", allowed);
  const uas = await startSippUas(
    "uas-answer-no-ringing.xml",
    {
      DELAY_MS: 100,
      MEDIA_IP: allowed,
      RTP_PORT: peer.port,
      ENDING: `<recv request="ACK" />${uasEnding.byeOnCue}`,
    },
    port.allowed,
    1,
    allowed,
  );
  const id = await place(number.allowed);
  await eventually(() => peer.received.length > 0, "our RTP at the callee", 20_000);
  await uas.hangUp();
  const done = await ended(id);
  peer.stop();
  expect((await uas.result).code).toBe(0);
  expect(done).toMatchObject({ status: "completed", endedReason: "hangup", error: null });
}, 60_000);

test("a callee whose answer names a refused address: ACKed and ended with our BYE, no RTP, the task failed with the refusal", async () => {
  const uas = await startSippUas(
    "uas-answer-no-ringing.xml",
    { DELAY_MS: 100, MEDIA_IP: refused, RTP_PORT: refusedPeer.port, ENDING: uasEnding.ackAndBye },
    port.answer,
    1,
    allowed,
  );
  const id = await place(number.answer);
  const done = await ended(id);
  expect(done).toMatchObject({ status: "failed", endedReason: "failed", error: refusal });
  // the UAS passes once its 200 was ACKed and our BYE came
  const sipp = await uas.result;
  expect(sipp.code, sipp.output).toBe(0);
  expect(refusedPeer.received).toHaveLength(0);
}, 60_000);

test("a callee whose early answer (SDP in its 180) names a refused address gets our CANCEL, no RTP", async () => {
  const sdp = [
    "Content-Type: application/sdp",
    "Content-Length: [len]",
    "",
    "v=0",
    `o=callee 1 1 IN IP4 ${refused}`,
    "s=-",
    `c=IN IP4 ${refused}`,
    "t=0 0",
    `m=audio ${refusedPeer.port} RTP/AVP 0`,
    "a=rtpmap:0 PCMU/8000",
    "a=sendrecv",
  ].join("\n");
  const uas = await startSippUas(
    "uas-never-answer.xml",
    { WAIT_MS: 20_000, RINGING_BODY: sdp },
    port.early,
    1,
    allowed,
  );
  const id = await place(number.early);
  const done = await ended(id);
  expect(done).toMatchObject({ status: "failed", endedReason: "failed", error: refusal });
  const sipp = await uas.result;
  expect(sipp.code, sipp.output).toBe(0); // it got our CANCEL (and the ACK of its 487)
  expect(refusedPeer.received).toHaveLength(0);
}, 60_000);

test("a caller whose offer names a refused address gets 488; the task is failed with the refusal", async () => {
  const result = await runSipp({
    scenario: "uac-call.xml",
    trunkHost: allowed,
    trunkPort,
    service: did,
    vars: uacCallVars(refusedPeer.port, 1000, { mediaIp: refused }),
  });
  expect(result.logs.join("\n"), result.output).toContain("REFUSED 488");
  const task = await eventually(
    async () =>
      (
        await world.tasks((t) => t.assistantId === assistantId && t.direction === "inbound" && t.status !== "offered")
      )[0],
    "the task closed",
  );
  expect(task.status).toBe("failed");
  expect(task.error).toStartWith("answer failed:");
  expect(task.error).toContain(refusal);
  expect(refusedPeer.received).toHaveLength(0);
}, 60_000);

test("a caller whose re-INVITE moves its media to a refused address gets 488 and our BYE; the task is failed with the refusal", async () => {
  const callerPeer = await startRtpPeer("PCMU", allowed);
  const result = await runSipp({
    scenario: "uac-call.xml",
    trunkHost: allowed,
    trunkPort,
    service: did,
    vars: uacCallVars(callerPeer.port, 2000, {
      mediaIp: allowed,
      afterWait: "reinvite",
      reinviteMediaIp: refused,
      callMs: 20_000,
    }),
    timeoutSeconds: 60,
  });
  callerPeer.stop();
  const logs = result.logs.join("\n");
  expect(logs, result.output).toContain("REFRESH_REFUSED 488");
  expect(logs).toContain("BRIDGE_HUNG_UP");
  expect(callerPeer.received.length).toBeGreaterThan(0); // the call had media until then
  const task = await eventually(
    async () =>
      (
        await world.tasks(
          (t) => t.assistantId === assistantId && t.status === "failed" && t.error?.startsWith("RTP destination"),
        )
      )[0],
    "the task closed",
  );
  expect(task).toMatchObject({ endedReason: "failed", error: refusal });
  expect(refusedPeer.received).toHaveLength(0);
}, 60_000);

test("a transferee whose answer names a refused address: the transfer fails with the reason, the caller is never joined to it", async () => {
  const sorry = "Sorry, nobody could take the call.";
  const assistant = await createTransferringAssistant(world, {
    numberId,
    greeting: "Hello, Acme desk.",
    destination: number.transferee,
    message: "Putting you through.",
    parameters: { ringTimeoutSeconds: 5 },
    afterFailure: sorry,
  });
  const callerPeer = await startRtpPeer("PCMU", allowed);
  const target = await startSippUas(
    "uas-answer-no-ringing.xml",
    { DELAY_MS: 100, MEDIA_IP: refused, RTP_PORT: refusedPeer.port, ENDING: uasEnding.ackAndBye },
    port.transferee,
    1,
    allowed,
  );
  const calling = await startSipp({
    scenario: "uac-call.xml",
    trunkHost: allowed,
    trunkPort,
    service: did,
    vars: uacCallVars(callerPeer.port, 60_000, { mediaIp: allowed }),
    timeoutSeconds: 80,
  });
  // the caller hangs up once the assistant has answered the failed transfer
  await hangUpAfterTheAnswer(calling, callerPeer, await assistant.fake.nextSession());
  const callerResult = await calling.result;
  const targetResult = await target.result;
  callerPeer.stop();
  // the destination's 200 was ACKed and ended with our BYE; the caller stayed with the assistant
  expect(targetResult.code, targetResult.output).toBe(0);
  expect(callerResult.logs.join("\n"), callerResult.output).toContain("CALLER_HUNG_UP");
  expect(callerPeer.received.length).toBeGreaterThan(0);
  const body = await eventually(
    async () => {
      const task = (await world.tasks((t) => t.assistantId === assistant.id))[0];
      return task && world.hookBodies("call_concluded").find((b) => b.callId === task.callId);
    },
    "call_concluded",
    40_000,
  );
  expect(body.transferredTo ?? null).toBeNull();
  expect(JSON.stringify(body.messages.find((m: any) => m.type === "tool_result"))).toContain(
    `the destination's media address was refused (${refused} is in the loopback range)`,
  );
  expect(body.messages.some((m: any) => m.text === sorry)).toBe(true);
  expect(refusedPeer.received).toHaveLength(0);
}, 90_000);
