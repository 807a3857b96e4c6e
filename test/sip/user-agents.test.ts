// The bridge's user agents against the real database and a real UDP socket standing in for the
// trunk (it only records what arrives): one per credential, registering only where the lease is
// held, rebuilt when a credential changes, retired when it goes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createSocket, type Socket } from "node:dgram";
import { createOutboundGuard } from "../../src/net/outbound-guard";
import { loadWantedCredentials } from "../../src/sip/credential-sync";
import { SipEndpoint } from "../../src/sip/sip-endpoint";
import { UserAgents } from "../../src/sip/user-agents";
import { freePort } from "../helpers/temporal";
import { startCredentialFixtures } from "./helpers/credentials";
import { eventually } from "./helpers/eventually";

let fixtures: Awaited<ReturnType<typeof startCredentialFixtures>>;
let endpoint: SipEndpoint;
let trunk: Socket;
let trunkPort: number;
const registers: string[] = [];

beforeAll(async () => {
  fixtures = await startCredentialFixtures("user-agents");
  endpoint = await SipEndpoint.listen({ bindHost: "127.0.0.1", publicHost: "127.0.0.1", port: await freePort() });
  trunk = createSocket("udp4");
  trunk.on("message", (data) => data.toString().startsWith("REGISTER ") && registers.push(data.toString()));
  await new Promise<void>((resolve) => trunk.bind(0, "127.0.0.1", resolve));
  trunkPort = trunk.address().port;
});
afterAll(async () => {
  await endpoint?.close();
  trunk?.close();
  await fixtures?.stop();
});

test("one user agent per credential, registering where the lease is held; rebuilt on change, retired on delete", async () => {
  const agents = new UserAgents({
    bridgeId: "unit",
    guard: createOutboundGuard({ allowCidrs: ["127.0.0.0/8"] }),
    endpoint,
    protocol: "UDP",
    registerExpiresSeconds: 60,
    retry: { baseMs: 60_000, maxMs: 60_000 },
    onReport: () => {},
    onInvite: () => {},
  });
  const held = await fixtures.createCredential({ port: trunkPort, username: "held" });
  const other = await fixtures.createCredential({ port: trunkPort, username: "other" });
  await fixtures.createNumber(held, "+15550320001", true);
  const sync = async (owned: string[], lost: string[] = []) =>
    agents.apply(await loadWantedCredentials(fixtures.db, (_id, sealed) => fixtures.secrets.decrypt(sealed)), {
      owned: new Set(owned),
      lost,
    });

  await sync([held]);
  const first = agents.get(held);
  expect(first?.owned).toBe(true);
  expect(agents.get(other)?.owned).toBe(false);
  expect([...(first?.numbers ?? [])].sort()).toEqual(["+15550320001", "15550320001"]);
  expect(first?.hasFallback).toBe(true);
  expect(first?.trunkAddresses).toEqual(["127.0.0.1"]);
  // the registered contact is random per user agent: nothing of the credential's id in it
  const hex = held.replace(/-/g, "");
  expect(first?.contactUser).not.toContain(hex.slice(0, 8));
  expect(first?.contactUser).not.toBe(agents.get(other)?.contactUser as string);
  await eventually(() => registers.some((r) => /^From:.*sip:held@/m.test(r)), "the REGISTER of the held credential");
  expect(registers.some((r) => /^From:.*sip:other@/m.test(r))).toBe(false);

  // nothing changed, or a PUT of the same settings (the password sealed anew): the same user agent
  await sync([held]);
  expect(agents.get(held)).toBe(first!);
  await fixtures.updateCredential(held, { port: trunkPort, username: "held" });
  await sync([held]);
  expect(agents.get(held)).toBe(first!);

  // a changed credential gets a new user agent; the lease moves
  await fixtures.updateCredential(held, { port: trunkPort, username: "held2" });
  await sync([other]);
  const rebuilt = agents.get(held);
  expect(rebuilt).toBeDefined();
  expect(rebuilt).not.toBe(first!);
  expect(rebuilt?.owned).toBe(false);
  expect(rebuilt?.contactUser).not.toBe(first?.contactUser as string);
  expect(first?.owned).toBe(false);
  expect(agents.get(other)?.owned).toBe(true);

  await fixtures.deleteCredential(other);
  await sync([]);
  expect(agents.get(other)).toBeUndefined();
  expect(agents.list().map((a) => a.credential.id)).toContain(held);

  await agents.stop();
  expect(agents.list()).toEqual([]);
}, 30_000);

test("a trunk host the outbound guard refuses: no addresses to take calls from, and nothing sent to it", async () => {
  const agents = new UserAgents({
    bridgeId: "unit-guard",
    guard: createOutboundGuard({ allowCidrs: [] }), // loopback not opened: the trunk at 127.0.0.1 is refused
    endpoint,
    protocol: "UDP",
    registerExpiresSeconds: 60,
    retry: { baseMs: 60_000, maxMs: 60_000 },
    onReport: () => {},
    onInvite: () => {},
  });
  const refused = await fixtures.createCredential({ port: trunkPort, username: "refused" });
  await agents.apply(await loadWantedCredentials(fixtures.db, (_id, sealed) => fixtures.secrets.decrypt(sealed)), {
    owned: new Set([refused]),
    lost: [],
  });
  const agent = agents.get(refused);
  expect(agent?.trunkAddresses).toEqual([]);
  expect(agent?.owned).toBe(true); // it tries to register, but the REGISTER never leaves
  await Bun.sleep(500);
  expect(registers.some((r) => /^From:.*sip:refused@/m.test(r))).toBe(false);
  await fixtures.deleteCredential(refused);
  await agents.stop();
}, 30_000);

test("a trunk host name is resolved again: calls follow its new address, a refused answer drops it, a failed lookup keeps it", async () => {
  let answer: string[] | Error = ["127.0.0.5"];
  const resolve = async () => {
    if (answer instanceof Error) throw Object.assign(answer, { code: "ENOTFOUND" });
    return answer;
  };
  const agents = new UserAgents({
    bridgeId: "unit-dns",
    guard: createOutboundGuard({ allowCidrs: ["127.0.0.0/8"], resolve }),
    trunkRefreshMs: 0,
    endpoint,
    protocol: "UDP",
    registerExpiresSeconds: 60,
    retry: { baseMs: 60_000, maxMs: 60_000 },
    onReport: () => {},
    onInvite: () => {},
  });
  const named = await fixtures.createCredential({ hostname: "trunk.example", port: trunkPort, username: "named" });
  const sync = async () => {
    await agents.apply(await loadWantedCredentials(fixtures.db, (_id, sealed) => fixtures.secrets.decrypt(sealed)), {
      owned: new Set(),
      lost: [],
    });
    await Bun.sleep(20); // the refresh runs in the background
  };
  await sync();
  expect(agents.get(named)?.trunkAddresses).toEqual(["127.0.0.5"]);
  answer = ["127.0.0.6", "127.0.0.7"];
  await sync();
  expect(agents.get(named)?.trunkAddresses).toEqual(["127.0.0.6", "127.0.0.7"]);
  answer = new Error("lookup failed");
  await sync();
  expect(agents.get(named)?.trunkAddresses).toEqual(["127.0.0.6", "127.0.0.7"]);
  answer = ["10.0.0.1"]; // now a private address the operator did not open
  await sync();
  expect(agents.get(named)?.trunkAddresses).toEqual([]);
  await fixtures.deleteCredential(named);
  await agents.stop();
}, 30_000);
