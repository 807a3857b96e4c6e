// Which credential's user agent takes a request from the endpoint, credential first: only the
// credentials whose trunk sent it (the source address is among the resolved addresses of the
// credential's registrar host) are candidates, so no trunk reaches another trunk's credentials
// (403 when no credential's trunk has that address). Among them: a request inside a dialog goes to
// the user agent that has the dialog (a replaced one too, until its calls end); else our registered
// contact user in the Request-URI names the credential; else the dialled number (Request-URI user,
// else To user) does, the trunk's port narrowing first (a carrier may serve several credentials from
// one address), then a fallback number (on the lease holder first). Nothing: 404.
import { getHeader, parseUri, requestUri, type SipMessage } from "./sip-message";
import type { Peer } from "./sip-endpoint";

/** What routing needs to know of a credential's user agent. */
export type RoutableAgent = {
  readonly contactUser: string;
  readonly trunkAddresses: readonly string[];
  readonly credential: { readonly port: number };
  readonly numbers: ReadonlySet<string>;
  readonly hasFallback: boolean;
  readonly owned: boolean;
  hasDialog(callId: string): boolean;
};

export type RouteDecision<A> = { agent: A } | { status: 403 | 404; reason: string };

export function routeRequest<A extends RoutableAgent>(
  agents: readonly A[],
  request: SipMessage,
  from: Peer,
): RouteDecision<A> {
  const trunk = agents.filter((a) => a.trunkAddresses.includes(from.address));
  if (trunk.length === 0) return { status: 403, reason: "Forbidden" };
  const agent = pick(trunk, request, from);
  return agent ? { agent } : { status: 404, reason: "Not Found" };
}

function pick<A extends RoutableAgent>(trunk: readonly A[], request: SipMessage, from: Peer): A | undefined {
  const to = getHeader(request, "to") ?? "";
  const callId = getHeader(request, "call-id");
  if (/;\s*tag=/i.test(to) && callId) {
    const inDialog = trunk.find((a) => a.hasDialog(callId));
    if (inDialog) return inDialog;
  }
  const user = parseUri(requestUri(request))?.user ?? null;
  const byContact = trunk.find((a) => a.contactUser === user);
  if (byContact) return byContact;
  const dialled = (user ?? parseUri(to)?.user ?? "").split(";")[0] ?? "";
  const atPort = trunk.filter((a) => a.credential.port === from.port);
  const candidates = atPort.length ? atPort : trunk;
  return (
    candidates.find((a) => a.numbers.has(dialled)) ??
    candidates.find((a) => a.hasFallback && a.owned) ??
    candidates.find((a) => a.hasFallback)
  );
}
