// Which credential's user agent takes a request from the endpoint: a request inside a dialog goes to
// the user agent that has the dialog (a replaced one too, until its calls end); else our contact in
// the Request-URI names the credential; otherwise the trunk's address and the dialled number (Request-URI user, else
// To user) do, the trunk's own address and port first (a carrier may serve several credentials from
// one IP), then the number, then a fallback number (on the lease holder first).
import { getHeader, parseUri, requestUri, type SipMessage } from "./sip-message";
import type { Peer } from "./sip-endpoint";

/** What routing needs to know of a credential's user agent. */
export type RoutableAgent = {
  readonly contactUser: string;
  readonly trunkAddress: string | null;
  readonly credential: { readonly port: number };
  readonly numbers: ReadonlySet<string>;
  readonly hasFallback: boolean;
  readonly owned: boolean;
  hasDialog(callId: string): boolean;
};

export function routeRequest<A extends RoutableAgent>(agents: readonly A[], request: SipMessage, from: Peer): A | null {
  const to = getHeader(request, "to") ?? "";
  const callId = getHeader(request, "call-id");
  if (/;\s*tag=/i.test(to) && callId) {
    const inDialog = agents.find((a) => a.hasDialog(callId));
    if (inDialog) return inDialog;
  }
  const user = parseUri(requestUri(request))?.user ?? null;
  const byContact = agents.find((a) => a.contactUser === user);
  if (byContact) return byContact;
  const dialled = (user ?? parseUri(to)?.user ?? "").split(";")[0] ?? "";
  const atAddress = agents.filter((a) => a.trunkAddress === from.address);
  const atPort = atAddress.filter((a) => a.credential.port === from.port);
  const candidates = atPort.length ? atPort : atAddress;
  return (
    candidates.find((a) => a.numbers.has(dialled)) ??
    candidates.find((a) => a.hasFallback && a.owned) ??
    candidates.find((a) => a.hasFallback) ??
    null
  );
}
