// One SIP credential on this bridge: a sip.js UserAgent over our transport and the INVITEs it
// receives. Every bridge runs one per credential (trunks may send calls to any of them, by address),
// but only the lease holder registers. Retiring it unregisters at once but lets its calls finish.
import { randomBytes } from "node:crypto";
import type { Invitation, Session } from "sip.js";
import { Registerer, UserAgent } from "sip.js";
import type { CallHandle, EndReason } from "../calls/caller-transport";
import { describeError } from "../errors";
import { log } from "../log";
import type { CallMedia } from "../media/call-media";
import { OutboundRefusedError, type OutboundGuard } from "../net/outbound-guard";
import { Registration, type RegistrationReport, type RetryPolicy } from "./registration";
import { RtpDescriptionHandler, endRefusedSession } from "./rtp-description-handler";
import type { Protocol, SipEndpoint } from "./sip-endpoint";
import { SipTransport, type SipTransportOptions } from "./sip-transport";

export type CredentialSettings = { id: string; hostname: string; port: number; username: string; password: string };

export type AgentOptions = {
  endpoint: SipEndpoint;
  /** Trunk hosts are tenant-chosen destinations: resolved and checked by the outbound guard. */
  guard: OutboundGuard;
  protocol: Protocol;
  registerExpiresSeconds: number;
  retry: RetryPolicy;
  onReport(credentialId: string, report: RegistrationReport): void;
  onInvite(agent: CredentialAgent, invitation: Invitation): void;
};

export class CredentialAgent {
  readonly contactUser: string;
  readonly calls = new Set<CallHandle>();
  readonly media = new Map<string, CallMedia>();
  readonly userAgent: UserAgent;
  /** The addresses of the credential's registrar host: only requests from these reach this user agent. */
  trunkAddresses: string[] = [];
  /** The credential's numbers (every spelling), for calls a trunk sends by address. */
  numbers = new Set<string>();
  hasFallback = false;
  private resolvedAt = 0;
  private resolving: Promise<void> | null = null;
  private registration: Registration | null = null;
  private readonly registrar;

  constructor(
    readonly credential: CredentialSettings,
    readonly key: string,
    private readonly options: AgentOptions,
  ) {
    // random per user agent (so per registration): nobody can derive our contact, or the Via token
    // that routes responses, from ids a tenant sees
    this.contactUser = `vas${randomBytes(12).toString("hex")}`;
    const token = randomBytes(8).toString("hex");
    const viaHost = `${token}.invalid`;
    const transportOptions: SipTransportOptions = {
      endpoint: options.endpoint,
      token,
      viaHost,
      contactUser: this.contactUser,
      protocol: options.protocol,
      guard: options.guard,
    };
    this.userAgent = new UserAgent({
      uri: UserAgent.makeURI(`sip:${encodeURIComponent(credential.username)}@${credential.hostname}`),
      authorizationUsername: credential.username,
      authorizationPassword: credential.password,
      transportConstructor: SipTransport,
      transportOptions,
      viaHost,
      contactName: this.contactUser,
      contactParams: { transport: options.protocol.toLowerCase() },
      sendInitialProvisionalResponse: false,
      sessionDescriptionHandlerFactory: (session: Session) => this.descriptionHandler(session),
      delegate: { onInvite: (invitation) => options.onInvite(this, invitation) },
      logBuiltinEnabled: false,
      logLevel: "error",
      logConnector: (level, category, _label, content) => log.debug("sip.js", { level, category, content }),
      userAgentString: "voice-assistant-service",
    });
    this.registrar = UserAgent.makeURI(`sip:${credential.hostname}:${credential.port}`);
  }

  get owned() {
    return this.registration !== null;
  }

  get transport(): SipTransport {
    return this.userAgent.transport as SipTransport;
  }

  async start() {
    await this.resolveTrunk();
    await this.userAgent.start();
  }

  /** Resolves the trunk host again once the last answer is older than `maxAgeMs` (DNS may move it). */
  refreshTrunk(maxAgeMs: number) {
    if (this.resolving || performance.now() - this.resolvedAt < maxAgeMs) return;
    this.resolving = this.resolveTrunk().finally(() => (this.resolving = null));
  }

  private async resolveTrunk() {
    try {
      this.trunkAddresses = await this.options.guard.resolveAllowed(this.credential.hostname);
    } catch (error) {
      // a host the guard refuses loses its trunk; a name that does not resolve for a moment keeps the
      // addresses it had
      if (error instanceof OutboundRefusedError) this.trunkAddresses = [];
      log.warn("sip trunk refused", {
        credentialId: this.credential.id,
        kept: this.trunkAddresses.length,
        error: describeError(error),
      });
    }
    this.resolvedAt = performance.now();
  }

  /** This bridge holds the credential's lease (or lost it): register (or unregister). */
  async setOwned(owned: boolean) {
    if (owned && !this.registration) {
      const registerer = new Registerer(this.userAgent, {
        expires: this.options.registerExpiresSeconds,
        refreshFrequency: 85, // well before expiry, leaving room for a retransmission or two
        registrar: this.registrar,
      });
      this.registration = new Registration(
        registerer,
        (report) => this.options.onReport(this.credential.id, report),
        this.options.retry,
      );
      this.registration.start();
    } else if (!owned && this.registration) {
      const registration = this.registration;
      this.registration = null;
      await registration.stop();
    }
  }

  /** Unregisters now; the user agent stays until its calls have ended (or `endCalls` ends them). */
  async retire(endCalls = false) {
    await this.setOwned(false);
    if (endCalls) this.endCalls("bridge-shutdown");
    await Promise.allSettled([...this.calls].map((c) => c.done));
    await this.userAgent.stop();
  }

  /** Whether a dialog of this user agent has the Call-ID (in-dialog requests must reach it). */
  hasDialog(callId: string): boolean {
    for (const dialog of this.userAgent.userAgentCore.dialogs.values()) if (dialog.callId === callId) return true;
    return false;
  }

  endCalls(reason: EndReason) {
    for (const call of this.calls) call.end(reason);
  }

  track(call: CallHandle) {
    this.calls.add(call);
    void call.done.finally(() => this.calls.delete(call));
  }

  private descriptionHandler(session: Session) {
    const media = this.media.get(session.id);
    if (!media) throw new Error("no RTP session for this SIP session");
    return new RtpDescriptionHandler(media, this.options.endpoint.publicHost, this.options.guard.refusalOf, (error) =>
      endRefusedSession(session, error),
    );
  }
}
