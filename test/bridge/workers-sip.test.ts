// `start:bridge` with BRIDGE_WORKERS=2 and SIP: each worker has its own SIP port and claims its share
// of the credentials' leases, registering them with its own Contact, so Kamailio (the trunk) sends a
// credential's calls to the worker that holds it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { agentTasks, sipRegistrations } from "../../src/db/schema";
import { freePort, reapWithParent } from "../helpers/temporal";
import { startRtpPeer } from "../sip/helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "../sip/helpers/sip-world";
import { runSipp, uacCallVars } from "../sip/helpers/sipp";

const users: Record<string, string> = {};
const dids: Record<string, string> = {};
const instanceId = `sip-workers-${process.pid}`;
const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
let world: SipWorld;
let supervisor: ChildProcess | null = null;
const artifacts = join(import.meta.dir, "../../test-artifacts");
mkdirSync(artifacts, { recursive: true });
const supervisorLog = join(artifacts, "workers-sip-supervisor.log");

beforeAll(async () => {
  // credentials earlier files left behind (the API tests make some on trunks that do not resolve)
  // would be claimed, tried and failed by these workers too: on a loaded CI machine each sync then
  // took 6-9 s and ours were not registered within 30 s; those files are done with them
  await db.transaction(async (tx) => {
    const numbers = sql`select id from sip_phone_numbers`;
    await tx.execute(sql`update assistants set telephone_number_id = null where telephone_number_id in (${numbers})`);
    await tx.execute(sql`delete from sip_phone_numbers`);
    await tx.execute(sql`delete from sip_credentials`);
  });
  for (let i = 1; i <= 4; i++) {
    users[`wk${i}`] = `wkpass${i}`;
    dids[`+1555050${String(i).padStart(4, "0")}`] = `wk${i}`;
  }
  world = await startSipWorld(users, dids);
}, 60_000);
afterAll(async () => {
  supervisor?.kill("SIGTERM");
  await new Promise((r) => (supervisor ? supervisor.once("exit", r) : r(null)));
  await world?.stop();
  await close();
}, 60_000);

test("credentials spread over the workers, and a call through Kamailio reaches the worker holding its credential", async () => {
  const credentials: string[] = [];
  for (const [user, password] of Object.entries(users)) credentials.push(await world.createCredential(user, password));
  const numbers = await Promise.all(Object.keys(dids).map((did, i) => world.createNumber(credentials[i]!, did)));

  // worker 0 listens on SIP port p, worker 1 on p + 1 (both UDP and TCP)
  const sipPort = await freePort([1]);
  supervisor = spawn("bun", ["src/bridge/main.ts"], {
    env: {
      ...process.env,
      BRIDGE_WORKERS: "2",
      BRIDGE_INSTANCE_ID: instanceId,
      BRIDGE_PORT: String(await freePort()),
      SIP_PORT: String(sipPort),
      SIP_BIND_HOST: "127.0.0.1",
      SIP_PUBLIC_HOST: "127.0.0.1",
      RTP_PORT_MIN: "38000",
      RTP_PORT_MAX: "38399",
      SIP_LEASE_MS: "3000",
      SIP_REGISTER_RETRY_MS: "500",
      SIP_REGISTER_EXPIRES: "60",
      OPENAI_BASE_URL: world.chat.baseUrl,
      OPENAI_REALTIME_URL: world.realtime.url,
      // lease and registration changes are info lines: the log below is for a failure's story
      LOG_LEVEL: "info",
    },
    // its log (one line per call event and lease change) and its errors are kept for a failure or a slow run
    stdio: ["ignore", openSync(supervisorLog, "w"), openSync(`${supervisorLog}.stderr`, "w")],
  });
  reapWithParent(supervisor.pid!, "KILL");

  for (const id of credentials)
    await eventually(
      async () => (await world.credential(id)).registration?.state === "registered",
      `credential ${id} registered`,
      // late in a loaded CI run each worker's lease transaction took 7-8 s (sip sync slow in its log)
      90_000,
    );
  const all = await db
    .select({ credentialId: sipRegistrations.credentialId, owner: sipRegistrations.ownerBridgeId })
    .from(sipRegistrations);
  const [total] = await db.execute<{ count: number }>(sql`select count(*)::int as count from sip_credentials`);
  const share = Math.ceil((total?.count ?? 0) / 2);
  // no worker holds more than its fair share of all credentials, and each holds some of ours
  const leases = all.filter((l) => credentials.includes(l.credentialId));
  for (const worker of [0, 1]) {
    expect(all.filter((l) => l.owner === `${instanceId}#${worker}`).length).toBeLessThanOrEqual(share);
    expect(leases.filter((l) => l.owner === `${instanceId}#${worker}`).length).toBeGreaterThan(0);
  }

  // a call to one number of each worker's credentials runs on that worker
  for (const worker of [0, 1]) {
    const owned = leases.find((l) => l.owner === `${instanceId}#${worker}`)!;
    const index = credentials.indexOf(owned.credentialId);
    const did = Object.keys(dids)[index]!;
    const assistant = await world.createAssistant({ numberId: numbers[index]!, greeting: "Hello." });
    const peer = await startRtpPeer();
    const result = await runSipp({
      scenario: "uac-call.xml",
      trunkPort: world.trunk.port,
      service: did,
      vars: uacCallVars(peer.port, 1000),
    });
    peer.stop();
    expect(result.logs.join("\n")).toContain("ANSWERED");
    // Kamailio sends the INVITE to the Contact the lease holder registered: its own worker's SIP port
    const [task] = await eventually(async () => {
      const found = await db.select().from(agentTasks).where(eq(agentTasks.assistantId, assistant.id));
      return found.length > 0 && found;
    }, "the call's task");
    expect(task).toMatchObject({ credentialId: owned.credentialId, bridgeId: `${instanceId}#${worker}` });
  }
}, 240_000);
