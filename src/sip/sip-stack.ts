// SIP in the bridge process: the endpoint on SIP_PORT, the RTP port pool, a user agent per credential
// (registering those this bridge holds the lease of), kept in step with the database (heartbeat,
// NOTIFY from the API), and the inbound calls they take.
import type { Invitation } from "sip.js";
import type { Config } from "../config";
import type { CallHandle } from "../calls/caller-transport";
import { recoverOrphanedTasks } from "../calls/call-lifecycle";
import type { CallDeps } from "../calls/run-call";
import { createSecretBox } from "../crypto/secrets";
import { createDb } from "../db/client";
import { sipCredentials, sipPhoneNumbers } from "../db/schema";
import { describeError } from "../errors";
import { log } from "../log";
import { PortPool } from "../media/port-pool";
import { CredentialAgent } from "./credential-agent";
import { handleInvite } from "./inbound-call";
import { LeaseKeeper } from "./leases";
import type { RegistrationReport } from "./registration";
import { SipEndpoint } from "./sip-endpoint";
import { getHeader, parseUri, requestUri } from "./sip-message";
import { spellings } from "./route-call";

export const credentialsChannel = "sip_credentials_changed";

export async function startSipStack(config: Config, options: { ticker?: CallDeps["ticker"] } = {}) {
  const sip = config.bridge.sip;
  const bridgeId = config.bridge.instanceId;
  const { db, client, close: closeDb } = createDb(config.databaseUrl, { max: 10 });
  const deps: CallDeps = { db, config, ticker: options.ticker };
  const secrets = createSecretBox(config.encryptionKey);
  const endpoint = await SipEndpoint.listen({ bindHost: sip.bindHost, publicHost: sip.publicHost, port: sip.port });
  const pool = new PortPool(config.bridge.rtpPortMin, config.bridge.rtpPortMax, sip.bindHost);
  const leases = new LeaseKeeper(db, bridgeId, sip.leaseMs);
  const agents = new Map<string, CredentialAgent>();
  let stopping = false;

  // our contact in the Request-URI names the credential; otherwise the trunk's address and the
  // dialled number (Request-URI user, else To user) do
  endpoint.router = (request, from) => {
    const user = parseUri(requestUri(request))?.user ?? null;
    const all = [...agents.values()];
    const byContact = all.find((a) => a.contactUser === user);
    if (byContact) return byContact.transport;
    const dialled = (user ?? parseUri(getHeader(request, "to") ?? "")?.user ?? "").split(";")[0] ?? "";
    // the trunk's own address and port first (a carrier may serve several credentials from one IP)
    const atAddress = all.filter((a) => a.trunkAddress === from.address);
    const atPort = atAddress.filter((a) => a.credential.port === from.port);
    const pick = (agents: CredentialAgent[]) =>
      agents.find((a) => a.numbers.has(dialled)) ?? agents.find((a) => a.hasFallback && a.owned) ?? agents.find((a) => a.hasFallback);
    return pick(atPort.length ? atPort : atAddress)?.transport ?? null;
  };

  const agentOptions = {
    endpoint,
    protocol: sip.transport,
    registerExpiresSeconds: sip.registerExpiresSeconds,
    retry: { baseMs: sip.retryBaseMs, maxMs: sip.retryMaxMs },
    onReport(credentialId: string, report: RegistrationReport) {
      log.info("sip registration", { credentialId, bridgeId, ...report });
      void leases.report(credentialId, report).catch((e) => log.warn("sip registration state not saved", { credentialId, error: describeError(e) }));
    },
    onInvite(agent: CredentialAgent, invitation: Invitation) {
      const context = { deps, pool, credentialId: agent.credential.id, rtpTimeoutMs: config.bridge.rtpTimeoutMs, media: agent.media, track: (call: CallHandle) => agent.track(call) };
      handleInvite(context, invitation).catch((error) => {
        log.error("sip invite failed", { credentialId: agent.credential.id, error: describeError(error) });
        invitation.reject({ statusCode: 500 }).catch(() => {});
      });
    },
  };

  async function sync() {
    const beat = await leases.heartbeat();
    for (const { credentialId, previousOwner } of beat.takenOver) {
      const closed = await recoverOrphanedTasks(db, previousOwner, { credentialId, error: "bridge lost" });
      log.warn("sip credential taken over", { credentialId, bridgeId, previousOwner, closedCalls: closed });
    }
    const rows = await db.select().from(sipCredentials);
    const numbers = await db.select({ credentialId: sipPhoneNumbers.credentialId, phoneNumber: sipPhoneNumbers.phoneNumber, fallback: sipPhoneNumbers.fallback }).from(sipPhoneNumbers);
    const wanted = new Map(rows.map((r) => [r.id, { row: r, key: `${r.hostname}|${r.port}|${r.username}|${r.passwordEncrypted}` }]));
    const retiring: Promise<void>[] = [];
    for (const [id, agent] of agents) {
      if (wanted.get(id)?.key === agent.key) continue;
      agents.delete(id);
      retiring.push(agent.retire());
    }
    // the old contact goes before the new one registers (both carry the same user); calls may go on
    await Promise.race([Promise.allSettled(retiring), Bun.sleep(4000)]);
    const owned = new Set(beat.owned);
    for (const [id, { row, key }] of wanted) {
      if (stopping) return;
      let agent = agents.get(id);
      if (!agent) {
        const password = unseal(id, row.passwordEncrypted);
        if (password === null) continue;
        agent = new CredentialAgent({ id, hostname: row.hostname, port: row.port, username: row.username, password }, key, agentOptions);
        agents.set(id, agent);
        await agent.start();
      }
      const own = numbers.filter((n) => n.credentialId === id);
      agent.numbers = new Set(own.flatMap((n) => spellings(n.phoneNumber)));
      agent.hasFallback = own.some((n) => n.fallback);
      const lost = agent.owned && !owned.has(id);
      await agent.setOwned(owned.has(id));
      // another bridge took the lease over because we renewed too late (stalled, cut off from the
      // database): it has closed our calls of this credential as lost, so they must not go on here
      // uncounted under maxAgentTasks
      if (lost && agent.calls.size > 0) {
        log.warn("sip lease lost", { credentialId: id, bridgeId, endingCalls: agent.calls.size });
        agent.endCalls("bridge-error");
      }
    }
  }

  function unseal(credentialId: string, sealed: string): string | null {
    try {
      return secrets.decrypt(sealed);
    } catch (error) {
      log.error("sip credential unreadable", { credentialId, error: describeError(error) });
      return null;
    }
  }

  // one sync at a time; a request during one runs once more after it
  let running: Promise<void> | null = null;
  let again = false;
  function resync() {
    if (stopping) return;
    if (running) return void (again = true);
    running = sync()
      .catch((error) => log.error("sip sync failed", { bridgeId, error: describeError(error) }))
      .finally(() => {
        running = null;
        if (again) (again = false), resync();
      });
  }

  const heartbeat = setInterval(resync, Math.max(200, Math.floor(sip.leaseMs / 3)));
  const listener = await client.listen(credentialsChannel, () => resync());
  resync();
  log.info("sip listening", { port: sip.port, transport: sip.transport, publicHost: sip.publicHost, bridgeId });

  return {
    endpoint,
    /** Resolves once the current sync is done (tests). */
    settled: async () => {
      while (running) await running;
    },
    get activeCalls() {
      return [...agents.values()].reduce((n, a) => n + a.calls.size, 0);
    },
    async stop() {
      stopping = true;
      clearInterval(heartbeat);
      await running;
      await listener.unlisten();
      await Promise.allSettled([...agents.values()].map((a) => a.retire(true)));
      agents.clear();
      await leases.releaseAll().catch(() => {});
      await endpoint.close();
      await closeDb();
    },
  };
}

export type SipStack = Awaited<ReturnType<typeof startSipStack>>;
