// Per-call context on real SIP calls (SIPp through Kamailio): the INVITE's X- headers as variables in
// the greeting and on the task, and a call_context refusal answered with 603.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { startRtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, uacCallVars } from "./helpers/sipp";

let world: SipWorld;
let context: Receiver;
let numberId: string;

beforeAll(async () => {
  world = await startSipWorld({ ctx: "ctxpass" }, { "+15550270001": "ctx" });
  context = await startReceiver(() => ({ status: 200, body: '{"reject": true}' }));
  const credentialId = await world.createCredential("ctx", "ctxpass");
  numberId = await world.createNumber(credentialId, "+15550270001");
  await world.startBridge("context");
  await world.registered(credentialId);
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await context?.close();
});

const call = (rtpPort: number, extraHeaders: string[]) =>
  runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550270001",
    extraHeaders,
    vars: uacCallVars(rtpPort, 1500),
  });

test("the INVITE's X- headers are variables: lowercased, dashes as underscores, in the greeting and on the task", async () => {
  const assistant = await world.createAssistant({ numberId, greeting: "Hello customer {{x_customer_id}}." });
  const peer = await startRtpPeer("PCMU");
  const sipp = call(peer.port, ["X-Customer-Id: C-77", "X-Caller-Tier: gold"]);
  const provider = await assistant.fake.nextSession();
  const greeting = await eventually(
    () => provider.received.find((e: any) => e.type === "response.create")?.response?.instructions as string,
    "the greeting",
  );
  expect(greeting).toEndWith("Hello customer C-77.");
  expect((await sipp).code).toBe(0);
  peer.stop();
  const [task] = await eventually(async () => {
    const tasks = await world.tasks((t) => t.assistantId === assistant.id && t.status === "completed");
    return tasks.length > 0 && tasks;
  }, "the task to close");
  expect(task.variables).toMatchObject({ x_customer_id: "C-77", x_caller_tier: "gold", caller_number: "+15557654321" });
}, 60_000);

test("call_context refuses: the INVITE gets 603 and the reserved task is closed as declined", async () => {
  const assistant = await world.createAssistant({
    numberId,
    extensions: [{ type: "call_context", parameters: { url: `${context.url}/context` } }],
  });
  const peer = await startRtpPeer("PCMU");
  const result = await call(peer.port, []);
  peer.stop();
  expect(result.logs.join("\n")).toContain("REFUSED 603");
  const body = JSON.parse(context.requests.at(-1)!.body.toString());
  expect(body.transport).toEqual({ type: "sip", calledNumber: "+15550270001", callingNumber: "+15557654321" });
  const [task] = await eventually(async () => {
    const tasks = await world.tasks((t) => t.assistantId === assistant.id && t.status !== "offered");
    return tasks.length > 0 && tasks;
  }, "the task to close");
  expect(task).toMatchObject({ callId: body.callId, status: "completed", endedReason: "declined" });
}, 60_000);
