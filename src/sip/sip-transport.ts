// sip.js's Transport for one user agent, over the shared endpoint. sip.js writes a Via and Contact
// with a placeholder host and no port and cannot pick a destination, so this layer:
// - rewrites our Via/Contact to the endpoint's address (and tags the Via so the response finds us),
//   and undoes it on responses, which sip.js otherwise drops;
// - sends requests by their first Route or their Request-URI, responses back by the top Via;
// - puts our contact user in the Request-URI of incoming requests (sip.js answers 404 when it differs,
//   and trunks often put the dialled number there), keeping the original in a header of ours;
// - retransmits its non-INVITE requests over UDP.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Transport } from "sip.js";
import type { Logger } from "sip.js/lib/core/log/logger.js";
import { TransportState } from "sip.js";
import { EmitterImpl } from "sip.js/lib/api/emitter.js";
import type { OutboundGuard } from "../net/outbound-guard";
import { Retransmitter } from "./retransmitter";
import { viaTokenParam, type EndpointClient, type Peer, type Protocol, type SipEndpoint } from "./sip-endpoint";
import {
  getHeaderList,
  isRequest,
  joinMessage,
  methodOf,
  parseUri,
  parseVia,
  removeHeader,
  replaceTopVia,
  requestUri,
  splitMessage,
  type SipMessage,
} from "./sip-message";

export type SipTransportOptions = {
  endpoint: SipEndpoint;
  token: string;
  viaHost: string;
  contactUser: string;
  protocol: Protocol;
  /** Where our requests go (the trunk, a Route, a contact) passes the outbound guard. */
  guard: OutboundGuard;
};

/** The Request-URI user as the trunk sent it, before we rewrote it. */
export const originalUserHeader = "X-Vas-Request-User";

export class SipTransport implements Transport, EndpointClient {
  readonly stateChange = new EmitterImpl<TransportState>();
  readonly protocol: Protocol;
  readonly token: string;
  state = TransportState.Disconnected;
  onConnect: (() => void) | undefined;
  onDisconnect: ((error?: Error) => void) | undefined;
  onMessage: ((message: string) => void) | undefined;
  private readonly retransmitter = new Retransmitter();
  private readonly options: SipTransportOptions;

  constructor(_logger: Logger, options: SipTransportOptions) {
    this.options = options;
    this.protocol = options.protocol;
    this.token = options.token;
  }

  async connect() {
    this.options.endpoint.add(this);
    this.transition(TransportState.Connected);
    this.onConnect?.();
  }

  async disconnect() {
    this.options.endpoint.remove(this.token);
    this.retransmitter.stopAll();
    if (this.state === TransportState.Connected) {
      this.transition(TransportState.Disconnected);
      this.onDisconnect?.();
    }
  }

  async dispose() {
    await this.disconnect();
    this.stateChange.removeAllListeners();
  }

  isConnected() {
    return this.state === TransportState.Connected;
  }

  async send(text: string): Promise<void> {
    const message = splitMessage(text);
    if (!message) throw new Error("sip.js produced an unparseable message");
    const { endpoint, viaHost } = this.options;
    const ours = new RegExp(`@${viaHost.replace(/\./g, "\\.")}(?=[;>\\s]|$)`, "g");
    message.headers = message.headers.map((h) =>
      /^(contact|m)\s*:/i.test(h) ? h.replace(ours, `@${endpoint.sentBy}`) : h,
    );
    if (!isRequest(message)) return endpoint.send(await this.responseDestination(message), joinMessage(message));
    replaceTopVia(message, (via) => via.replace(viaHost, `${endpoint.sentBy};rport;${viaTokenParam}=${this.token}`));
    const destination = await this.requestDestination(message);
    const wire = joinMessage(message);
    await endpoint.send(destination, wire);
    const method = methodOf(message);
    const branch = parseVia(getHeaderList(message, "via")[0] ?? "")?.params.get("branch");
    if (this.protocol === "UDP" && branch && method !== "ACK" && method !== "INVITE") {
      this.retransmitter.start(branch, () => void endpoint.send(destination, wire).catch(() => {}));
    }
  }

  /** From the endpoint: a message for this user agent. */
  receive(message: SipMessage, _from: Peer) {
    if (isRequest(message)) this.claimRequestUri(message);
    else {
      const via = parseVia(getHeaderList(message, "via")[0] ?? "");
      const branch = via?.params.get("branch");
      if (branch) this.retransmitter.stop(branch);
      replaceTopVia(message, (v) => v.replace(/^(SIP\s*\/\s*2\.0\s*\/\s*\w+\s+)[^;]+/i, `$1${this.options.viaHost}`));
      const ours = new RegExp(`@${this.options.endpoint.sentBy.replace(/\./g, "\\.")}(?=[;>\\s]|$)`, "g");
      message.headers = message.headers.map((h) =>
        /^(contact|m)\s*:/i.test(h) ? h.replace(ours, `@${this.options.viaHost}`) : h,
      );
    }
    this.onMessage?.(joinMessage(message));
  }

  private claimRequestUri(message: SipMessage) {
    removeHeader(message, originalUserHeader); // never trust one a peer sent
    const uri = requestUri(message);
    const parsed = parseUri(uri);
    if (!parsed || parsed.user === this.options.contactUser) return;
    const user = this.options.contactUser;
    const rewritten = /^tel:/i.test(uri)
      ? `sip:${user}@${this.options.endpoint.sentBy}`
      : parsed.user === null
        ? uri.replace(/^(sips?:)/i, `$1${user}@`)
        : uri.replace(/^(sips?:)[^@]*@/i, `$1${user}@`);
    if (parsed.user !== null) message.headers.push(`${originalUserHeader}: ${encodeURIComponent(parsed.user)}`);
    message.startLine = `${methodOf(message)} ${rewritten} SIP/2.0`;
  }

  private async requestDestination(message: SipMessage): Promise<Peer> {
    const route = getHeaderList(message, "route")[0];
    const target = parseUri(route ?? requestUri(message));
    if (!target) throw new Error("request without a routable URI");
    const transport = /;\s*transport=(\w+)/i.exec(route ?? requestUri(message))?.[1]?.toUpperCase();
    const [address] = await this.options.guard.resolveAllowed(target.host);
    if (!address) throw new Error(`${target.host} has no address`);
    return {
      protocol: transport === "TCP" || transport === "UDP" ? transport : this.protocol,
      address,
      port: target.port ?? 5060,
    };
  }

  private async responseDestination(message: SipMessage): Promise<Peer> {
    const via = parseVia(getHeaderList(message, "via")[0] ?? "");
    if (!via) throw new Error("response without a Via");
    const received = via.params.get("received") ?? via.host;
    const rport = Number(via.params.get("rport")) || via.port || 5060;
    return { protocol: via.protocol === "TCP" ? "TCP" : "UDP", address: await resolve(received), port: rport };
  }

  private transition(state: TransportState) {
    this.state = state;
    this.stateChange.emit(state);
  }
}

const resolved = new Map<string, { address: string; until: number }>();

async function resolve(host: string): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (isIP(bare)) return bare;
  const cached = resolved.get(bare);
  if (cached && cached.until > Date.now()) return cached.address;
  const { address } = await lookup(bare, { family: 4 });
  resolved.set(bare, { address, until: Date.now() + 60_000 });
  return address;
}
