// The bridge's SIP metrics around a real call (SIPp through Kamailio, the test's RTP peer speaking):
// calls active by transport and by credential, and the RTP jitter and loss of the caller's stream.
// The SIP stack runs in this process, so its registry is read directly.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import { registry } from "../../src/metrics/metrics";
import { speech } from "../helpers/speech";
import { startRtpPeer } from "../sip/helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "../sip/helpers/sip-world";
import { runSipp, uacCallVars } from "../sip/helpers/sipp";
import { parseMetrics, total } from "./scrape";

let world: SipWorld;
let credentialId: string;
let numberId: string;

beforeAll(async () => {
  world = await startSipWorld({ metrics: "metricspass" }, { "+15550300001": "metrics" });
  credentialId = await world.createCredential("metrics", "metricspass", 3);
  numberId = await world.createNumber(credentialId, "+15550300001");
  await world.startBridge("metrics");
  await world.registered(credentialId);
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

const samples = async () => parseMetrics(await registry.metrics());

test("a SIP call counts against its credential while it runs; its RTP jitter and packets are recorded", async () => {
  const greeting = "Hello, metrics here.";
  const audio = await speech(greeting, 24000);
  await world.createAssistant({ numberId, greeting, fake: { onInstructions: () => ({ text: greeting, audio }) } });
  const before = await samples();
  const peer = await startRtpPeer("PCMU");
  const sipp = runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550300001",
    extraHeaders: [],
    vars: uacCallVars(peer.port, 4000, { from: `"Bob" <sip:+15557654000@127.0.0.1>` }),
  });
  await eventually(() => peer.latched, "the bridge's first RTP packet");
  await eventually(() => rms(peer.heard()) > 300, "greeting audio");
  peer.say(await speech("Just checking the metrics.", 8000));
  const during = await samples();
  expect(total(during, "vas_sip_credential_calls_active", { credential: credentialId })).toBe(1);
  expect(
    total(during, "vas_calls_active", { transport: "sip" }) - total(before, "vas_calls_active", { transport: "sip" }),
  ).toBe(1);
  expect((await sipp).code).toBe(0);
  peer.stop();

  const [task] = await eventually(
    async () => {
      const tasks = await world.tasks(
        (t) => t.credentialId === credentialId && t.status !== "active" && t.status !== "offered",
      );
      return tasks.length > 0 && tasks;
    },
    "the concluded task",
    30_000,
  );
  expect(task.status).toBe("completed");
  const after = await eventually(async () => {
    const s = await samples();
    return total(s, "vas_rtp_jitter_seconds_count") > total(before, "vas_rtp_jitter_seconds_count") && s;
  }, "the RTP session's metrics");
  expect(total(after, "vas_sip_credential_calls_active", { credential: credentialId })).toBe(0);
  expect(total(after, "vas_calls_active", { transport: "sip" })).toBe(
    total(before, "vas_calls_active", { transport: "sip" }),
  );
  const delta = (name: string, labels: Record<string, string> = {}) =>
    total(after, name, labels) - total(before, name, labels);
  // the caller sent 20 ms packets for several seconds over loopback: many received, none lost, little jitter
  expect(delta("vas_rtp_packets_received_total")).toBeGreaterThan(100);
  expect(delta("vas_rtp_packets_lost_total")).toBe(0);
  expect(delta("vas_rtp_jitter_seconds_count")).toBe(1);
  expect(delta("vas_rtp_jitter_seconds_sum")).toBeLessThan(0.03); // the peer paces with setInterval on a shared machine
  expect(delta("vas_call_duration_seconds_count", { transport: "sip", status: "completed" })).toBe(1);
  expect(delta("vas_call_setup_seconds_count", { transport: "sip" })).toBe(1);
}, 60_000);
