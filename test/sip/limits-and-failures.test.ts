// maxAgentTasks across two bridges under a burst, and the ways a call can fail: CANCEL before the
// answer, the caller hanging up mid-sentence, RTP stopping, a session refresh, garbage on the wire.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createSocket } from "node:dgram";
import { connect } from "node:net";
import { startRtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, startSipp, uacCallVars } from "./helpers/sipp";

let world: SipWorld;
let bridges: Awaited<ReturnType<SipWorld["startBridge"]>>[];
let credentialId: string;
let numberId: string;

beforeAll(async () => {
  world = await startSipWorld({ cap: "cappass" }, { "+15550309001": "cap" });
  credentialId = await world.createCredential("cap", "cappass", 5);
  numberId = await world.createNumber(credentialId, "+15550309001");
  bridges = [await world.startBridge("cap-a"), await world.startBridge("cap-b")];
  await world.registered(credentialId);
  await Promise.all(bridges.map((b) => b.settled()));
}, 60_000);
afterAll(() => world?.stop());

const openTasks = async () => world.tasks((t) => t.status === "offered" || t.status === "active");
const lastTaskOf = async (assistantId: string) => (await world.tasks((t) => t.assistantId === assistantId))[0];

test("garbage datagrams, malformed SIP and a broken TCP stream leave the bridge serving", async () => {
  const port = bridges[0]!.sipPort;
  const udp = createSocket("udp4");
  udp.on("error", () => {});
  const junk = [
    Buffer.from([0, 1, 2, 3, 255]),
    "\r\n\r\n",
    "INVITE nonsense\r\n\r\n",
    "OPTIONS sip:x SIP/2.0\r\nVia: broken\r\n\r\n",
    "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 1.2.3.4;branch=z9hG4bKx;x-vas=nobody\r\n\r\n",
    "INVITE sip:+15550309001@127.0.0.1 SIP/2.0\r\nContent-Length: 99999\r\n\r\nv=0",
  ];
  for (const message of junk) udp.send(message, port, "127.0.0.1");
  const tcp = connect(port, "127.0.0.1");
  await new Promise((r) => tcp.once("connect", r));
  tcp.write(Buffer.alloc(70_000, 0x41));
  // the bridge reads them on later turns of this event loop: a fixed sleep could end (its timer run
  // first after a stall) before the loop had polled the sockets at all
  await eventually(() => bridges[0]!.endpoint.dropped > 0, "the junk dropped");
  tcp.destroy();
  udp.close();
  // still answering: an OPTIONS ping through the trunk's address gets a reply
  const assistant = await world.createAssistant({ numberId, greeting: "Hi." });
  const result = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: port,
    service: "+15550309001",
    vars: uacCallVars(9, 500),
  });
  expect(result.logs.join("\n")).toContain("ANSWERED");
  await eventually(async () => (await lastTaskOf(assistant.id))?.status === "completed", "the call to complete");
}, 30_000);

test("maxAgentTasks = 5: of 20 simultaneous INVITEs across two bridges exactly 5 are answered, 15 get 486", async () => {
  const assistant = await world.createAssistant({ numberId, greeting: "Hello." });
  const burst = (port: number) =>
    runSipp({
      scenario: "uac-call.xml",
      trunkPort: port,
      service: "+15550309001",
      calls: 10,
      rate: 1000,
      vars: uacCallVars(9, 3000),
      timeoutSeconds: 30,
    });
  const runs = await Promise.all(bridges.map((b) => burst(b.sipPort)));
  const logs = runs.flatMap((r) => r.logs).join("\n");
  expect(logs.match(/ANSWERED/g)?.length).toBe(5);
  expect(logs.match(/REFUSED 486/g)?.length).toBe(15);
  // no task for the refused calls; none left open once the answered ones hung up
  await eventually(async () => (await openTasks()).length === 0, "every task closed");
  const tasks = await world.tasks((t) => t.assistantId === assistant.id);
  expect(tasks.length).toBe(5);
  expect(tasks.every((t) => t.status === "completed")).toBe(true);
}, 60_000);

test("CANCEL before the answer: 487, and the reserved task is closed with call_concluded", async () => {
  const assistant = await world.createAssistant({ numberId, greeting: "Hello." });
  // while we hold the credential's reservation lock the bridge cannot answer, so the CANCEL (sent on
  // the bridge's 100 Trying) always lands first; the slot is reserved once we let go
  const release = await world.holdReservations(credentialId);
  let result: Awaited<ReturnType<typeof runSipp>>;
  try {
    result = await runSipp({ scenario: "uac-cancel.xml", trunkPort: world.trunk.port, service: "+15550309001" });
  } finally {
    await release();
  }
  expect(result.logs.join("\n")).toContain("CANCELLED");
  const task = await eventually(async () => {
    const t = await lastTaskOf(assistant.id);
    return t && t.status !== "offered" && t;
  }, "the task to close");
  expect(task).toMatchObject({ status: "completed", error: "caller cancelled before the answer", startedAt: null });
  await eventually(() => world.hookBodies("call_concluded").find((b) => b.callId === task.callId), "call_concluded");
  expect(await openTasks()).toEqual([]);
}, 30_000);

test("the caller hangs up while the agent speaks", async () => {
  const assistant = await world.createAssistant({
    numberId,
    greeting: "Thank you for calling, this is a rather long greeting that goes on and on for a while.",
  });
  const peer = await startRtpPeer();
  const result = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550309001",
    vars: uacCallVars(peer.port, 700),
  });
  peer.stop();
  expect(result.logs.join("\n")).toContain("CALLER_HUNG_UP");
  const task = await eventually(async () => {
    const t = await lastTaskOf(assistant.id);
    return t?.status !== "active" && t;
  }, "the task to close");
  expect(task).toMatchObject({ status: "completed", error: null });
  const concluded = await eventually(
    () => world.hookBodies("call_concluded").find((b) => b.callId === task.callId),
    "call_concluded",
  );
  expect(concluded.messages[0]).toMatchObject({ role: "ASSISTANT" });
}, 30_000);

test("RTP stops: the bridge times the call out and sends BYE", async () => {
  const assistant = await world.createAssistant({ numberId, greeting: "Hello." });
  const peer = await startRtpPeer();
  const sipp = runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550309001",
    vars: uacCallVars(peer.port, 20_000),
  });
  await eventually(() => peer.latched, "RTP from the bridge");
  await Bun.sleep(500);
  peer.silence();
  const result = await sipp;
  peer.stop();
  expect(result.logs.join("\n")).toContain("BRIDGE_HUNG_UP");
  const task = await eventually(async () => {
    const t = await lastTaskOf(assistant.id);
    return t?.status !== "active" && t;
  }, "the task to close");
  expect(task).toMatchObject({ status: "failed", error: null });
  await eventually(() => world.hookBodies("call_concluded").find((b) => b.callId === task.callId), "call_concluded");
}, 30_000);

test("a re-INVITE refreshes the session without dropping the call", async () => {
  const assistant = await world.createAssistant({ numberId, greeting: "Hello." });
  const peer = await startRtpPeer();
  const result = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550309001",
    vars: uacCallVars(peer.port, 1000, { afterWait: "reinvite", callMs: 1500 }),
  });
  peer.stop();
  const log = result.logs.join("\n");
  expect(log).toContain("REFRESHED");
  expect(log).toContain("CALLER_HUNG_UP");
  // media kept flowing after the refresh (1 s in; the call lasts 2.5 s): a dropped call sends nothing
  // then. Counted late in the call, not over all of it, so a stall of a loaded machine is no failure.
  const first = peer.received[0]!.at;
  expect(peer.received.filter((r) => r.at - first > 1_500).length).toBeGreaterThan(20);
  const task = await eventually(async () => {
    const t = await lastTaskOf(assistant.id);
    return t?.status === "completed" && t;
  }, "the task to complete");
  expect(task.error).toBeNull();
}, 30_000);

test("a PUT on the credential during a call keeps the call and its dialog: the caller's BYE gets 200", async () => {
  const assistant = await world.createAssistant({ numberId, greeting: "Hello." });
  for (const password of ["cappass", "changed"]) {
    // the same password (sealed anew by the PUT), then a new one (the user agent is rebuilt)
    const peer = await startRtpPeer();
    const sipp = await startSipp({
      scenario: "uac-call.xml",
      trunkPort: world.trunk.port,
      service: "+15550309001",
      vars: uacCallVars(peer.port, 20_000),
    });
    const { callId } = await eventually(
      async () => (await world.tasks((t) => t.assistantId === assistant.id && t.status === "active"))[0],
      `the call (${password})`,
    );
    const before = peer.received.length;
    await world.updateCredential(credentialId, { password });
    await Promise.all(bridges.map((b) => b.settled()));
    // the caller hangs up once a second of the agent's RTP came after the PUT (not after a fixed 4 s)
    await eventually(() => peer.received.length > before + 50, `the agent's RTP after the PUT (${password})`);
    await sipp.hangUp();
    const result = await sipp.result;
    peer.stop();
    expect(result.code).toBe(0); // SIPp fails the call on a 481 to its BYE
    expect(result.logs.join("\n")).toContain("CALLER_HUNG_UP");
    expect(peer.received.length).toBeGreaterThan(before + 50); // the agent's RTP went on
    const task = await eventually(
      async () => (await world.tasks((t) => t.callId === callId && t.status !== "active"))[0],
      "the call to end",
    );
    expect(task).toMatchObject({ status: "completed", error: null });
  }
  // the trunk knows the original password: register with it again for the next tests
  await world.updateCredential(credentialId, { password: "cappass" });
  await world.registered(credentialId);
}, 60_000);

test("an offer with no usable codec: 488, and the reserved task is recorded as failed, not as cancelled", async () => {
  const assistant = await world.createAssistant({ numberId, greeting: "Hello." });
  const result = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550309001",
    vars: { ...uacCallVars(9, 1000), PT: 18, CODEC: "G729" },
  });
  expect(result.logs.join("\n")).toContain("REFUSED 488");
  const task = await eventually(
    async () => (await world.tasks((t) => t.assistantId === assistant.id && t.status !== "offered"))[0],
    "the task closed",
  );
  expect(task.status).toBe("failed");
  expect(task.error).toContain("answer failed");
  expect(task.error).toContain("PCMU or PCMA");
  await eventually(() => world.hookBodies("call_concluded").find((b) => b.callId === task.callId), "call_concluded");
}, 30_000);
