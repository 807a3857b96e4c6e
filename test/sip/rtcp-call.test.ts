// A SIP call through Kamailio whose caller answers our RTCP sender reports with receiver reports: what
// the caller reported (jitter, loss, round trip) lands on the call's agent task and in its media log line.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { agentTasks } from "../../src/db/schema";
import { setLogLevel } from "../../src/log";
import { buildRtcp, parseRtcp, rtcpSenderReport } from "../../src/media/rtcp";
import { startRtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, uacCallVars } from "./helpers/sipp";

const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
let world: SipWorld;
const write = process.stdout.write.bind(process.stdout);
const restoreStdout = () => {
  setLogLevel("warn");
  process.stdout.write = write;
};

beforeAll(async () => {
  world = await startSipWorld({ rtcp: "rtcppass" }, { "+15550600001": "rtcp" });
}, 60_000);
afterAll(async () => {
  restoreStdout();
  await world?.stop();
  await close();
});

/** The caller's RTP peer and, on its port + 1, an RTCP socket answering every SR with an RR. */
async function callerWithRtcp() {
  for (;;) {
    const peer = await startRtpPeer();
    const reports: number[] = [];
    try {
      const rtcp = await Bun.udpSocket({
        hostname: "127.0.0.1",
        port: peer.port + 1,
        socket: {
          data(socket, data, port, address) {
            const sr = parseRtcp(data).find((r) => r.type === rtcpSenderReport);
            if (!sr?.sender) return;
            reports.push(sr.ssrc);
            // 30 ms of jitter (240 units at 8 kHz), 4 packets lost, the SR echoed after 0.25 s
            const block = {
              ssrc: sr.ssrc,
              fractionLost: 1,
              cumulativeLost: 4,
              extendedHighestSequence: 0,
              jitter: 240,
              lastSenderReport: sr.sender.ntpMiddle,
              delaySinceLastSenderReport: 16384,
            };
            setTimeout(
              () => socket.send(buildRtcp({ ssrc: 0x1234abcd, cname: "caller", blocks: [block] }), port, address),
              250,
            );
          },
        },
      });
      const stop = () => {
        peer.stop();
        rtcp.close();
      };
      return { peer, reports, stop };
    } catch {
      peer.stop(); // port + 1 taken: another peer
    }
  }
}

test("the caller's receiver reports are kept on the agent task", async () => {
  const credentialId = await world.createCredential("rtcp", "rtcppass");
  const numberId = await world.createNumber(credentialId, "+15550600001");
  const assistant = await world.createAssistant({ numberId, greeting: "Hello." });
  const bridge = await world.startBridge("rtcp");
  await world.registered(credentialId);

  const caller = await callerWithRtcp();
  // the call's log lines, as the bridge writes them
  const lines: string[] = [];
  process.stdout.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  setLogLevel("info");
  const result = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550600001",
    vars: uacCallVars(caller.peer.port, 4000),
  });
  caller.stop();
  expect(result.logs.join("\n")).toContain("ANSWERED");
  // the first SR goes out 2.5 s into the call
  expect(caller.reports.length).toBeGreaterThanOrEqual(1);
  const task = await eventually(async () => {
    const [row] = await db.select().from(agentTasks).where(eq(agentTasks.assistantId, assistant.id));
    return row?.callerJitterMs != null && row;
  }, "the caller's figures on the task");
  expect(task).toMatchObject({ callerJitterMs: 30, callerPacketsLost: 4 });
  // the caller held the SR the 0.25 s it declares: on loopback the round trip left is about zero
  expect(task.roundTripMs).toBeGreaterThanOrEqual(0);
  expect(task.roundTripMs!).toBeLessThan(200);
  expect(bridge.bridgeId).toBeTruthy();

  const callLines = await eventually(() => {
    const mine = lines.filter((l) => l.includes(task.callId)).map((l) => JSON.parse(l));
    return mine.some((l) => l.event === "media") && mine;
  }, "the call's media line");
  restoreStdout();
  for (const event of ["concluded", "media"]) {
    expect(callLines.find((l) => l.event === event)?.caller).toMatchObject({ jitterMs: 30, packetsLost: 4 });
  }
}, 60_000);
