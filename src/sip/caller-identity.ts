// Who was dialled and who is calling, as trunks write it. calledNumber: the Request-URI user the trunk
// sent (saved by the transport before sip.js saw the message), else the To user. callingNumber: the
// P-Asserted-Identity user, else the From user; the literal "anonymous" whenever the caller withheld
// it (Privacy id/user/header, an anonymous user, the anonymous.invalid host), and then the asserted
// identity is never read, so it cannot leak into events or tool webhooks.
import { parseUri } from "./sip-message";

export type IdentityHeaders = {
  requestUser: string | null;
  to: string;
  from: string;
  assertedIdentity: string | null;
  privacy: string | null;
};
export type CallerIdentity = { calledNumber: string; callingNumber: string };

export const anonymous = "anonymous";

const userOf = (header: string | null) => {
  const user = header ? parseUri(header)?.user : null;
  return user ? user.split(";")[0] : null;
};

export function callerIdentity(h: IdentityHeaders): CallerIdentity {
  const calledNumber = (h.requestUser?.split(";")[0] || userOf(h.to)) ?? "";
  return {
    calledNumber,
    callingNumber: withheld(h) ? anonymous : (userOf(h.assertedIdentity) ?? userOf(h.from) ?? anonymous),
  };
}

function withheld(h: IdentityHeaders): boolean {
  const privacy = (h.privacy ?? "").toLowerCase().split(/[;,\s]+/);
  if (privacy.some((p) => p === "id" || p === "user" || p === "header")) return true;
  const from = parseUri(h.from);
  if (!from?.user) return true;
  return from.user.toLowerCase() === anonymous || from.host.toLowerCase() === "anonymous.invalid";
}
