// A bridge out of RTP ports (another process holds the rest of the range, a call holds its last one)
// refuses the next INVITE with 503 and Retry-After, never 500, and closes the call's reserved task.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, uacCallVars } from "./helpers/sipp";

let world: SipWorld;
let bridge: Awaited<ReturnType<SipWorld["startBridge"]>>;
let numberId: string;
let held: { close(): void };
let min: number;

beforeAll(async () => {
  world = await startSipWorld({ ports: "portspass" }, { "+15550310001": "ports" });
  const credentialId = await world.createCredential("ports", "portspass");
  numberId = await world.createNumber(credentialId, "+15550310001");
  // a range of two even ports, the first held here as another bridge worker would hold it
  for (;;) {
    const probe = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    if (probe.port % 2 === 0 && probe.port + 3 < 65536) {
      held = probe;
      min = probe.port;
      break;
    }
    probe.close();
  }
  bridge = await world.startBridge("ports", { RTP_PORT_MIN: String(min), RTP_PORT_MAX: String(min + 3) });
  await world.registered(credentialId);
  await bridge.settled();
}, 60_000);
afterAll(async () => {
  held?.close();
  await world?.stop();
});

const call = (callMs: number) =>
  runSipp({
    scenario: "uac-call.xml",
    trunkPort: bridge.sipPort,
    service: "+15550310001",
    vars: uacCallVars(9, callMs, { callMs: 500 }),
  });

test("out of RTP ports: 503 with Retry-After, the refused call's task closed with call_concluded", async () => {
  const assistant = await world.createAssistant({ numberId, greeting: "Hello." });
  // ended by the caller well before the bridge's RTP time-out (4 s in the SIP world; this caller sends
  // no RTP): a 4 s call raced it, and the time-out that won made the first call `failed` too
  const first = call(2500);
  await eventually(
    async () => (await world.tasks((t) => t.assistantId === assistant.id && t.status === "active")).length === 1,
    "the first call to take the last free port",
  );
  const refused = await call(500);
  expect(refused.logs.join("\n")).toContain("REFUSED 503");
  expect(refused.messages).toMatch(/SIP\/2\.0 503[\s\S]*Retry-After: 5/);
  expect(refused.messages).not.toMatch(/SIP\/2\.0 500/);
  expect((await first).logs.join("\n")).toContain("ANSWERED");

  const tasks = await eventually(async () => {
    const all = await world.tasks((t) => t.assistantId === assistant.id);
    return all.length === 2 && all.every((t) => t.status !== "offered" && t.status !== "active") && all;
  }, "both tasks closed");
  const failed = tasks.find((t) => t.status === "failed");
  expect(failed.error).toContain(`no free RTP port in ${min}..${min + 3}`);
  expect(tasks.filter((t) => t.status === "completed").length).toBe(1);
  await eventually(
    () => world.hookBodies("call_concluded").find((b) => b.callId === failed.callId),
    "call_concluded of the refused call",
  );
}, 60_000);
