// SIP over TCP end to end: the bridge (SIP_TRANSPORT=tcp) registers to Kamailio over TCP, SIPp calls
// through Kamailio over TCP, and the call runs and concludes as over UDP. This bridge keeps its RTP in
// its event loop (BRIDGE_MEDIA_THREAD=false), so that placement has a whole call too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import { startRtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, uacCallVars } from "./helpers/sipp";

let world: SipWorld;
let bridge: Awaited<ReturnType<SipWorld["startBridge"]>>;
let numberId: string;

beforeAll(async () => {
  world = await startSipWorld({ stream: "streampass" }, { "+15550600001": "stream" });
  const credentialId = await world.createCredential("stream", "streampass");
  numberId = await world.createNumber(credentialId, "+15550600001");
  bridge = await world.startBridge("tcp", { SIP_TRANSPORT: "tcp", BRIDGE_MEDIA_THREAD: "false" });
  await world.registered(credentialId);
}, 60_000);
afterAll(() => world?.stop());

test("a call over TCP through the trunk: answered, media both ways, hung up, call_concluded", async () => {
  const assistant = await world.createAssistant({ numberId, greeting: "Hello from the TCP desk." });
  const peer = await startRtpPeer("PCMU");
  const result = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550600001",
    vars: uacCallVars(peer.port, 2000),
    extra: ["-t", "t1"],
  });
  peer.stop();
  expect(result.code, result.output).toBe(0);
  expect(result.logs.join("\n")).toContain("CALLER_HUNG_UP");
  expect(result.messages).toContain("SIP/2.0/TCP");
  expect(rms(peer.heard())).toBeGreaterThan(300);
  // every SIP message the bridge got came over TCP (REGISTER answers, INVITE, ACK, BYE)
  expect(bridge.endpoint.received.TCP).toBeGreaterThan(3);
  expect(bridge.endpoint.received.UDP).toBe(0);

  const task = await eventually(async () => {
    const t = (await world.tasks((t) => t.assistantId === assistant.id))[0];
    return t?.status === "completed" && t;
  }, "the task to complete");
  const concluded = await eventually(
    () => world.hookBodies("call_concluded").find((b) => b.callId === task.callId),
    "call_concluded",
  );
  expect(concluded.transport).toEqual({ type: "sip", calledNumber: "+15550600001", callingNumber: "+15557654321" });
  expect(concluded.messages[0]).toMatchObject({
    role: "ASSISTANT",
    text: expect.stringContaining("Hello from the TCP desk."),
  });
}, 40_000);
