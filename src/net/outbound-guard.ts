// The one policy for destinations a tenant chooses (hook URLs, tool serverUrls, SIP trunk hosts).
//
// API:
//   createOutboundGuard({ allowCidrs, resolve? }) -> OutboundGuard
//     allowCidrs: config.outbound.allowCidrs (OUTBOUND_ALLOW_CIDRS); resolve: a test resolver, else DNS
//   guard.refusalOf(address)       -> null when an IP literal may be reached, else why not (string)
//   guard.configuredHostRefusal(h) -> configuration time, no DNS: why a URL host / hostname is refused, or null
//   guard.configuredUrlRefusal(u)  -> the same for a URL
//   guard.resolveAllowed(host)     -> send time: resolves once, checks every answer, returns the checked
//                                     addresses to connect to; throws OutboundRefusedError when the policy
//                                     refuses (permanent), a plain Error when the name does not resolve
//                                     (DNS may answer later: retryable)
//   parseAllowCidrs(raw)           -> config.ts: the CIDR list, throws on a malformed entry
//
// Refused unless an allowed CIDR covers it: every IPv4 range that is not public unicast (loopback,
// unspecified, RFC 1918, CGNAT, link-local and metadata, multicast, broadcast, reserved), every IPv6
// address outside public unicast 2000::/3 (loopback, ULA, link-local, IPv4-compatible, 6to4, Teredo),
// and IPv6 forms that embed an IPv4 address (mapped, translated, NAT64) judged by the embedded one.
// Numeric spellings (0x7f000001, 2130706433, 017700000001, 127.1) are normalized by the WHATWG URL
// host parser before the check, the same parser every URL we send to goes through.
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

/** All addresses a name resolves to, the way the sender would connect (getaddrinfo: /etc/hosts and DNS). */
export type Resolver = (host: string) => Promise<string[]>;

export class OutboundRefusedError extends Error {
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`destination refused: ${reason}`);
    this.name = "OutboundRefusedError";
  }
}

export type OutboundGuard = ReturnType<typeof createOutboundGuard>;
/** The guard's check of an IP literal: null when it may be reached, else why not. */
export type AddressRefusal = OutboundGuard["refusalOf"];

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

// Names that stand for this machine (RFC 6761): judged as its loopback addresses.
const LOOPBACK_NAMES = /(^|\.)localhost$|^localhost\.localdomain$|^ip6-localhost$|^ip6-loopback$/;
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");
// NAT64 well-known prefix: the last 32 bits are the IPv4 destination
const NAT64_V6 = ipaddr.parseCIDR("64:ff9b::/96");

export function parseAllowCidrs(raw: string): string[] {
  return raw
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => {
      try {
        const [address, bits] = ipaddr.parseCIDR(entry);
        return `${address.toString()}/${bits}`;
      } catch {
        throw new Error(`OUTBOUND_ALLOW_CIDRS: "${entry}" is not a CIDR (e.g. 10.1.0.0/16 or fd00::/8)`);
      }
    });
}

/** The hostname as a URL would send it: numeric IPv4 spellings normalized, IPv6 unbracketed, lower case. */
export function normalizeHost(host: string): string | null {
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  let hostname: string;
  try {
    hostname = new URL(`http://${bracketed}/`).hostname;
  } catch {
    return null;
  }
  if (hostname.startsWith("[")) hostname = hostname.slice(1, -1);
  return hostname.replace(/\.$/, "");
}

function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const range = address.range();
  if (range === "ipv4Mapped" || range === "rfc6145" || address.match(NAT64_V6)) {
    const bytes = address.toByteArray();
    return new ipaddr.IPv4(bytes.slice(12));
  }
  return null;
}

export function createOutboundGuard(options: { allowCidrs: string[]; resolve?: Resolver }) {
  const allowed: Cidr[] = options.allowCidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  const resolve = options.resolve ?? systemResolver;

  const isAllowedByList = (address: Address) =>
    allowed.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));

  function refusalOfAddress(address: Address): string | null {
    if (isAllowedByList(address)) return null;
    if (address.kind() === "ipv4") {
      const range = address.range();
      return range === "unicast" ? null : `${address.toString()} is in the ${range} range`;
    }
    const v6 = address as ipaddr.IPv6;
    const inner = embeddedIpv4(v6);
    if (inner) {
      const why = refusalOfAddress(inner);
      return why && `${v6.toString()} embeds ${why}`;
    }
    const range = v6.range();
    if (range !== "unicast") return `${v6.toString()} is in the ${range} IPv6 range`;
    if (!v6.match(GLOBAL_UNICAST_V6)) return `${v6.toString()} is outside global unicast IPv6`;
    return null;
  }

  /** null when the IP literal may be reached; a host name (not an IP) is refused here. */
  function refusalOf(address: string): string | null {
    const normalized = normalizeHost(address.replace(/%.*$/, ""));
    if (normalized === null || !ipaddr.isValid(normalized)) return `${address} is not an IP address`;
    return refusalOfAddress(ipaddr.parse(normalized));
  }

  function configuredHostRefusal(host: string): string | null {
    const normalized = normalizeHost(host);
    if (normalized === null || normalized === "") return `${host} is not a valid host`;
    if (ipaddr.isValid(normalized)) return refusalOfAddress(ipaddr.parse(normalized));
    if (LOOPBACK_NAMES.test(normalized)) {
      const why = refusalOf("127.0.0.1") ?? refusalOf("::1");
      return why && `${normalized} names this machine (${why})`;
    }
    return null;
  }

  function configuredUrlRefusal(url: string): string | null {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return "not a valid URL";
    }
    return configuredHostRefusal(parsed.hostname);
  }

  async function resolveAllowed(host: string): Promise<string[]> {
    const normalized = normalizeHost(host);
    if (normalized === null || normalized === "") throw new OutboundRefusedError(host, `${host} is not a valid host`);
    const literalWhy = configuredHostRefusal(normalized);
    if (literalWhy) throw new OutboundRefusedError(host, literalWhy);
    if (ipaddr.isValid(normalized)) return [normalized];
    let answers: string[];
    try {
      answers = await resolve(normalized);
    } catch (err) {
      throw new Error(
        `${normalized} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    if (answers.length === 0) throw new Error(`${normalized} has no address`);
    // every answer is checked: a name with one private answer among public ones is refused outright
    for (const answer of answers) {
      const why = refusalOf(answer);
      if (why) throw new OutboundRefusedError(host, `${normalized} resolves to ${why}`);
    }
    return answers;
  }

  return { refusalOf, configuredHostRefusal, configuredUrlRefusal, resolveAllowed };
}
