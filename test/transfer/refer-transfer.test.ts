// Blind transfer by REFER on SIP calls, with real peers: SIPp calls in through Kamailio, the fake
// model calls transfer_call, the bridge speaks the destination's message and sends REFER in the
// caller's dialog; the caller accepts it (202, NOTIFY 100 then a final NOTIFY) or refuses it (501).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startRtpPeer } from "../sip/helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "../sip/helpers/sip-world";
import { runSipp } from "../sip/helpers/sipp";
import { greetThenTransfer } from "../bridge/fixtures";

let world: SipWorld;
let numberId: string;
let trunkPort: number;
const did = "+15550300001";
const sales = "+15550300099";

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {});
  const desk = await world.registeredCredential({
    user: "desk",
    dids: { [did]: "desk" },
    number: did,
    bridge: "transfer",
    config: "kamailio.cfg",
  });
  numberId = desk.numberId;
  trunkPort = desk.trunk.port;
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

const greeting = "Hello, Acme desk.";
const message = "Putting you through to sales, {{caller_number}}.";
const spoken = "Putting you through to sales, +15557654321.";

/** An assistant that asks for the transfer right after its greeting, on the destination given. */
const transferringAssistant = (destination: string, parameters: Record<string, unknown> = {}) =>
  world.createAssistant({
    numberId,
    greeting,
    extensions: [
      {
        type: "transfer_call",
        parameters: { destinations: [{ to: sales, description: "Sales", message }], ...parameters },
      },
    ],
    fake: {
      onInstructions: greetThenTransfer(greeting, "transfer_call", destination),
      afterToolOutputs: () => ({ text: "Sorry, nobody could take the call." }),
    },
  });

const transferee = async (vars: Record<string, string | number>) => {
  const peer = await startRtpPeer("PCMU");
  const result = await runSipp({
    scenario: "uac-transferee.xml",
    trunkPort: trunkPort,
    service: did,
    vars: { RTP_PORT: peer.port, NOTIFY_DELAY_MS: 300, FINAL: "200 OK", CALL_MS: 4000, ...vars },
    timeoutSeconds: 40,
  });
  peer.stop();
  return result;
};

const concludedFor = (assistantId: string) =>
  eventually(
    async () => {
      const task = (await world.tasks((t) => t.assistantId === assistantId))[0];
      const body = task && world.hookBodies("call_concluded").find((b) => b.callId === task.callId);
      return body && { task, body };
    },
    "call_concluded",
    30_000,
  );

test("REFER accepted: message spoken first, Refer-To at the trunk, final NOTIFY 200 ends the call as transferred", async () => {
  const assistant = await transferringAssistant(sales);
  const result = await transferee({ REFER_STATUS: "202 Accepted", AFTER_REFER: "notify" });
  expect(result.code, result.output).toBe(0);
  const logs = result.logs.join("\n");
  expect(logs).toMatch(new RegExp(`REFER_TO\\s+<?sip:15550300099@127\\.0\\.0\\.1:${trunkPort}>?`));
  expect(logs).toMatch(/REFERRED_BY\s+<sip:desk@127\.0\.0\.1>/);
  expect(logs).toContain("FINAL_NOTIFIED");
  // our leg stayed until the final NOTIFY, then we hung up
  expect(logs).toContain("BRIDGE_HUNG_UP");

  const { task, body } = await concludedFor(assistant.id);
  expect(body).toMatchObject({ endedReason: "transferred", transferredTo: sales });
  expect(task).toMatchObject({ status: "completed", endedReason: "transferred", transferredTo: sales });
  const kinds = body.messages.map((m: any) => (m.type === "text" ? `${m.role}:${m.text}` : m.type));
  // the message (its template rendered) is spoken before the transfer's result
  expect(kinds.indexOf(`ASSISTANT:${spoken}`)).toBeGreaterThan(-1);
  expect(kinds.indexOf(`ASSISTANT:${spoken}`)).toBeLessThan(kinds.indexOf("tool_result"));
  const toolResult = body.messages.find((m: any) => m.type === "tool_result");
  expect(JSON.stringify(toolResult)).toContain(`transferred to ${sales}`);
}, 90_000);

test("REFER refused with 501: the assistant hears why and the call goes on until the caller hangs up", async () => {
  const assistant = await transferringAssistant(sales);
  const result = await transferee({ REFER_STATUS: "501 Not Implemented", AFTER_REFER: "waitbye" });
  expect(result.code, result.output).toBe(0);
  expect(result.logs.join("\n")).toContain("CALLER_HUNG_UP");
  const { task, body } = await concludedFor(assistant.id);
  expect(body.endedReason).toBe("hangup");
  expect(body.transferredTo).toBeUndefined();
  expect(task.transferredTo).toBeNull();
  const toolResult = body.messages.find((m: any) => m.type === "tool_result");
  expect(JSON.stringify(toolResult)).toContain("501");
  // the fallback to a second leg was tried: this trunk refuses it (the bridged transfer itself is
  // test/sip/transfer-dial.test.ts)
  expect(JSON.stringify(toolResult)).toMatch(/and then the destination answered [45]\d\d/);
  expect(body.messages.some((m: any) => m.text === "Sorry, nobody could take the call.")).toBe(true);
}, 90_000);

test("a final NOTIFY 486 is a failed destination; onFailure hangup ends the call", async () => {
  const assistant = await transferringAssistant(sales, { onFailure: "hangup" });
  const result = await transferee({ REFER_STATUS: "202 Accepted", AFTER_REFER: "notify", FINAL: "486 Busy Here" });
  expect(result.code, result.output).toBe(0);
  expect(result.logs.join("\n")).toContain("BRIDGE_HUNG_UP");
  const { body } = await concludedFor(assistant.id);
  expect(body.endedReason).toBe("assistant-ended");
  expect(body.transferredTo).toBeUndefined();
  expect(JSON.stringify(body.messages.find((m: any) => m.type === "tool_result"))).toContain("486 (busy)");
}, 90_000);

test("no final NOTIFY within the ring time-out: the transfer gives up and the assistant goes on", async () => {
  const assistant = await transferringAssistant(sales, { ringTimeoutSeconds: 5 });
  const result = await transferee({
    REFER_STATUS: "202 Accepted",
    AFTER_REFER: "notify",
    NOTIFY_DELAY_MS: 7000,
    CALL_MS: 3000,
  });
  // the late final NOTIFY is still answered; the caller hangs up afterwards
  expect(result.code, result.output).toBe(0);
  expect(result.logs.join("\n")).toContain("CALLER_HUNG_UP");
  const { body } = await concludedFor(assistant.id);
  expect(body.endedReason).toBe("hangup");
  expect(JSON.stringify(body.messages.find((m: any) => m.type === "tool_result"))).toContain(
    "no final NOTIFY within 5 s",
  );
}, 90_000);
