// Ownership across bridges: a bridge process killed during a call loses its credential to another
// bridge within seconds; the dead bridge's call is closed (failed, call_concluded) and the trunk
// routes new calls to the new owner. A bridge that finds its lease taken ends its calls of it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { sql } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { reapWithParent, freePort } from "../helpers/temporal";
import { startRtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, uacCallVars } from "./helpers/sipp";

let world: SipWorld;
let child: ChildProcess | null = null;
let credentialId: string;
let assistantId: string;

beforeAll(async () => {
  world = await startSipWorld({ lease: "leasepass" }, { "+15550400001": "lease" });
}, 60_000);
afterAll(async () => {
  child?.kill("SIGKILL");
  await world?.stop();
});

test("a killed bridge's credential is taken over, its call closed, and new calls reach the new owner", async () => {
  credentialId = await world.createCredential("lease", "leasepass");
  const numberId = await world.createNumber(credentialId, "+15550400001");
  const assistant = await world.createAssistant({ numberId, greeting: "Hello." });
  assistantId = assistant.id;
  // bridge A: a real `start:bridge` process, alone, so it takes the lease
  const bridgeA = `sip-proc-${process.pid}`;
  child = spawn("bun", ["src/bridge/main.ts"], {
    env: {
      ...process.env,
      BRIDGE_INSTANCE_ID: bridgeA,
      BRIDGE_PORT: String(await freePort()),
      SIP_PORT: String(await freePort()),
      SIP_BIND_HOST: "127.0.0.1",
      SIP_PUBLIC_HOST: "127.0.0.1",
      RTP_PORT_MIN: "39000",
      RTP_PORT_MAX: "39199",
      SIP_LEASE_MS: "3000",
      OPENAI_BASE_URL: world.chat.baseUrl,
      OPENAI_REALTIME_URL: world.realtime.url,
    },
    stdio: "ignore",
  });
  reapWithParent(child.pid!, "KILL");
  await eventually(
    async () => (await world.credential(credentialId)).registration?.state === "registered",
    "bridge A to register",
    20_000,
  );
  const peer = await startRtpPeer();
  const doomed = runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550400001",
    vars: uacCallVars(peer.port, 6_000),
  });
  const task = await eventually(
    async () => (await world.tasks((t) => t.assistantId === assistant.id && t.status === "active"))[0],
    "the call on bridge A",
  );
  expect(task.credentialId).toBe(credentialId);

  // bridge B starts, then A dies mid-call; B has A's lease length: it takes an expired lease only once
  // it has watched the database that long (with the world's 10 s, most of this test's time)
  const b = await world.startBridge("heir", { SIP_LEASE_MS: "3000" });
  child.kill("SIGKILL");
  const closed = await eventually(
    async () => {
      const [t] = await world.tasks((t) => t.callId === task.callId);
      return t.status !== "active" && t;
    },
    "the dead bridge's call to be closed",
    20_000,
  );
  expect(closed).toMatchObject({ status: "failed", error: "bridge lost" });
  await eventually(
    () => world.hookBodies("call_concluded").find((h) => h.callId === task.callId),
    "call_concluded of the lost call",
  );
  await eventually(
    async () => (await world.credential(credentialId)).registration?.state === "registered",
    "bridge B to register",
  );

  // the next call goes to B
  const peer2 = await startRtpPeer();
  const next = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550400001",
    vars: uacCallVars(peer2.port, 1000),
  });
  peer2.stop();
  expect(next.logs.join("\n")).toContain("ANSWERED");
  const fresh = await eventually(
    async () => (await world.tasks((t) => t.assistantId === assistant.id && t.callId !== task.callId))[0],
    "the new call's task",
  );
  expect(fresh.credentialId).toBe(credentialId);
  expect(b.bridgeId).not.toBe(bridgeA);
  peer.stop();
  await doomed.catch(() => {});
}, 90_000);

test("a bridge whose lease another bridge took (it renewed too late) hangs up its calls of that credential", async () => {
  const earlier = new Set((await world.tasks()).map((t) => t.callId)); // the last test's call may still be ending
  const peer = await startRtpPeer();
  const sipp = runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "+15550400001",
    vars: uacCallVars(peer.port, 20_000),
  });
  const task = await eventually(
    async () =>
      (await world.tasks((t) => t.assistantId === assistantId && t.status === "active" && !earlier.has(t.callId)))[0],
    "the call",
  );
  // what a takeover leaves behind: the lease held by someone else, for a good while
  const { db, close } = createDb(process.env.DATABASE_URL!, { max: 1 });
  await db.execute(
    sql`update sip_registrations set owner_bridge_id = 'sip-usurper', lease_expires_at = now() + interval '1 hour' where credential_id = ${credentialId}`,
  );
  await close();
  const result = await sipp;
  peer.stop();
  expect(result.logs.join("\n")).toContain("BRIDGE_HUNG_UP");
  const ended = await eventually(async () => {
    const [t] = await world.tasks((t) => t.callId === task.callId);
    return t.status !== "active" && t;
  }, "the task to close");
  expect(ended.status).toBe("failed");
}, 40_000);
