// A SIP bridge whose Postgres goes away: an INVITE is refused within the call-start budget with 503
// and Retry-After (the trunk may try again), not left ringing on a dead connection; once Postgres is
// back the next INVITE is answered.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTcpProxy, throughProxy, type TcpProxy } from "../bridge/tcp-proxy";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, uacCallVars } from "./helpers/sipp";

let world: SipWorld;
let proxy: TcpProxy;
let bridge: Awaited<ReturnType<SipWorld["startBridge"]>>;

beforeAll(async () => {
  world = await startSipWorld({ away: "awaypass" }, { "+15550308001": "away" });
  const pg = new URL(process.env.DATABASE_URL!);
  proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
  const credentialId = await world.createCredential("away", "awaypass");
  const numberId = await world.createNumber(credentialId, "+15550308001");
  await world.createAssistant({ numberId, greeting: "Hi." });
  bridge = await world.startBridge("away", {
    DATABASE_URL: throughProxy(process.env.DATABASE_URL!, proxy),
    DATABASE_TIMEOUT_MS: "2000",
  });
  await world.registered(credentialId);
  await bridge.settled();
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await proxy?.close();
});

const call = () =>
  runSipp({
    scenario: "uac-call.xml",
    trunkPort: bridge.sipPort,
    service: "+15550308001",
    vars: uacCallVars(9, 500),
  });

test.each(["refused", "black-holed"] as const)(
  "Postgres %s: INVITE gets 503 with Retry-After, then calls are answered again",
  async (variant) => {
    if (variant === "refused") proxy.cut();
    else proxy.blackhole();
    const refused = await call();
    expect(refused.logs.join("\n")).toContain("REFUSED 503");
    expect(refused.messages).toMatch(/SIP\/2\.0 503[\s\S]*Retry-After: 5/);
    proxy.restore();
    await eventually(
      async () => (await call()).logs.join("\n").includes("ANSWERED"),
      "a call answered after the return",
    );
  },
  60_000,
);
