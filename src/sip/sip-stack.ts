// SIP in the bridge process: the endpoint on SIP_PORT, the calls' RTP (on the media thread, or the RTP
// port pool in this event loop), a user agent per credential (registering those this bridge holds the
// lease of), kept in step with the database (heartbeat, NOTIFY from the API), and the inbound calls
// they take.
import type { Invitation } from "sip.js";
import type { Config } from "../config";
import type { CallHandle } from "../calls/caller-transport";
import type { CallDeps } from "../calls/run-call";
import { createSecretBox } from "../crypto/secrets";
import { createDb } from "../db/client";
import { OUTBOUND_CALLS_CHANNEL, SIP_CREDENTIALS_CHANNEL } from "../db/schema";
import { hearHangups } from "../calls/running-calls";
import { describeError } from "../errors";
import { coalescingRunner } from "../lib/coalescing-runner";
import { log } from "../log";
import type { OpenMedia } from "../media/call-media";
import { startMediaThread, type MediaThread } from "../media/media-thread";
import { PortPool } from "../media/port-pool";
import { openInProcess } from "../media/rtp-session";
import { createOutboundGuard } from "../net/outbound-guard";
import type { CredentialAgent } from "./credential-agent";
import { loadWantedCredentials } from "./credential-sync";
import type { SipCallContext } from "./answered-call";
import { handleInvite, retryAfter } from "./inbound-call";
import { OutboundCall } from "./outbound-call";
import { OutboundDialer } from "./outbound-dialer";
import { LeaseKeeper } from "./leases";
import { listenAlways } from "../db/listen";
import { isDatabaseUnavailable } from "../db/unavailable";
import type { RegistrationReport } from "./registration";
import { routeRequest } from "./request-router";
import { SipEndpoint } from "./sip-endpoint";
import { LeaseSync } from "./takeover";
import { UserAgents } from "./user-agents";

export async function startSipStack(config: Config, options: { ticker?: CallDeps["ticker"] } = {}) {
  const sip = config.bridge.sip;
  const bridgeId = config.bridge.instanceId;
  const {
    db,
    client,
    availability,
    close: closeDb,
  } = createDb(config.databaseUrl, {
    max: 10,
    warm: true,
    // routing and the reservation of every INVITE, never queued behind the calls' writes
    answerPath: 2,
    timeoutMs: config.databaseTimeoutMs,
    prepare: config.databasePrepare,
    listenUrl: config.databaseListenUrl ?? undefined,
    readModel: config.readModel,
    name: `sip ${config.bridge.instanceId}`,
  });
  const deps: CallDeps = { db, availability, config, ticker: options.ticker };
  const endpoint = await SipEndpoint.listen({ bindHost: sip.bindHost, publicHost: sip.publicHost, port: sip.port });
  const { rtpPortMin: portMin, rtpPortMax: portMax, mediaLeadMs: leadMs } = config.bridge;
  const mediaThread: MediaThread | null = config.bridge.mediaThread
    ? startMediaThread({ portMin, portMax, hostname: sip.bindHost, leadMs, allowCidrs: config.outbound.allowCidrs })
    : null;
  const openMedia: OpenMedia =
    mediaThread?.open ?? openInProcess(new PortPool(portMin, portMax, sip.bindHost), config.outbound.allowCidrs);
  // a worker of start:bridge claims its share of the credentials, so their calls spread over the workers
  const share = config.bridge.workerIndex === null ? null : { bridges: config.bridge.workers };
  const leaseKeeper = new LeaseKeeper(db, bridgeId, sip.leaseMs, share, () => availability.continuousMs());
  const leases = new LeaseSync(db, leaseKeeper);

  const secrets = createSecretBox(config.encryptionKey);
  const unseal = (credentialId: string, sealed: string) => {
    try {
      return secrets.decrypt(sealed);
    } catch (error) {
      log.error("sip credential unreadable", { credentialId, error: describeError(error) });
      return null;
    }
  };

  const agents = new UserAgents({
    bridgeId,
    endpoint,
    guard: createOutboundGuard(config.outbound),
    protocol: sip.transport,
    registerExpiresSeconds: sip.registerExpiresSeconds,
    retry: { baseMs: sip.retryBaseMs, maxMs: sip.retryMaxMs },
    onReport(credentialId: string, report: RegistrationReport) {
      log.info("sip registration", { credentialId, bridgeId, ...report });
      void leaseKeeper
        .report(credentialId, report)
        .catch((e) => log.warn("sip registration state not saved", { credentialId, error: describeError(e) }));
    },
    onInvite(agent: CredentialAgent, invitation: Invitation) {
      handleInvite(callContext(agent), invitation).catch((error) => {
        const credentialId = agent.credential.id;
        // the database away: the trunk may try again (or another route) in a moment
        if (isDatabaseUnavailable(error)) {
          log.warn("sip invite refused: database unavailable", { credentialId, error: describeError(error) });
          return void invitation.reject({ statusCode: 503, extraHeaders: [retryAfter] }).catch(() => {});
        }
        log.error("sip invite failed", { credentialId, error: describeError(error) });
        invitation.reject({ statusCode: 500 }).catch(() => {});
      });
    },
  });
  function callContext(agent: CredentialAgent): SipCallContext {
    return {
      deps,
      openMedia,
      credentialId: agent.credential.id,
      trunk: agent.credential,
      userAgent: agent.userAgent,
      rtpTimeoutMs: config.bridge.rtpTimeoutMs,
      media: agent.media,
      track: (call: CallHandle) => agent.track(call),
    };
  }
  // outbound calls assigned to this bridge, placed by the credential's user agent
  const dialer = new OutboundDialer(db, bridgeId, (task) => {
    const agent = agents.get(task.credentialId);
    return agent ? new OutboundCall(callContext(agent), agent, task) : null;
  });
  // not before the first sync has built the user agents the calls go out through
  let synced = false;
  endpoint.router = (request, from) => {
    const decision = routeRequest(agents.routable(), request, from);
    return "agent" in decision ? { client: decision.agent.transport } : decision;
  };

  // one sync at a time; a heartbeat or NOTIFY during one runs it once more after it
  const sync = coalescingRunner(
    async () => {
      const started = performance.now();
      const beat = await leases.beat();
      const beatMs = performance.now() - started;
      await agents.apply(await loadWantedCredentials(db, unseal), beat);
      synced = true;
      dialer.request(); // a NOTIFY missed (reconnect) is caught here
      // claims, take-overs and user agents wait for this sync (renewals do not): worth a line when slow
      const tookMs = Math.round(performance.now() - started);
      if (tookMs > sip.leaseMs / 3)
        log.warn("sip sync slow", { bridgeId, tookMs, leaseBeatMs: Math.round(beatMs), leaseMs: sip.leaseMs });
    },
    (error) => log.error("sip sync failed", { bridgeId, error: describeError(error) }),
  );
  // leases are also renewed on their own: a sync (claims, take-overs, user agents) may take seconds on a
  // loaded machine, and a renewal waiting behind it let a sibling take a live bridge's credentials over
  const renewal = coalescingRunner(
    () => leaseKeeper.renew(),
    (error) => log.warn("sip lease renewal failed", { bridgeId, error: describeError(error) }),
  );
  const beatEveryMs = Math.max(200, Math.floor(sip.leaseMs / 3));
  const heartbeat = setInterval(() => {
    renewal.request();
    sync.request();
  }, beatEveryMs);
  // a change made while the connection was down went unheard: a sync at every (re)connect
  const listener = listenAlways(client, SIP_CREDENTIALS_CHANNEL, sync.request, sync.request);
  // calls assigned while the connection was down are found by the dialer's per-heartbeat poll
  const outbound = listenAlways(client, OUTBOUND_CALLS_CHANNEL, (bridge) => {
    if (bridge === bridgeId && synced) dialer.request();
  });
  const hangups = hearHangups(client, (callId) => {
    dialer.hangup(callId).catch((e) => log.warn("hang-up failed", { callId, error: describeError(e) }));
  });
  sync.request();
  log.info("sip listening", { port: sip.port, transport: sip.transport, publicHost: sip.publicHost, bridgeId });

  return {
    endpoint,
    agents,
    /** Resolves once the current sync is done (tests). */
    settled: sync.settled,
    get activeCalls() {
      return agents.activeCalls;
    },
    async stop() {
      clearInterval(heartbeat);
      agents.halt();
      await Promise.all([sync.stop(), renewal.stop()]);
      await Promise.all([listener.unlisten(), outbound.unlisten(), hangups.unlisten()]);
      await dialer.stop();
      await agents.stop();
      await mediaThread?.stop();
      await leases.releaseAll().catch(() => {});
      await endpoint.close();
      await closeDb();
    },
  };
}

export type SipStack = Awaited<ReturnType<typeof startSipStack>>;
