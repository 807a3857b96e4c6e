// The SIP URI of a destination we dial or refer to (design.md, "Outbound calls").
/** Where we send a call or a transfer: a number at the credential's trunk (`sip:<digits>@host`), a sip: URI as given. */
export function destinationUri(to: string, trunk: { hostname: string; port: number }): string {
  if (/^sip:/i.test(to)) return to;
  const host = trunk.hostname.toLowerCase();
  // lower case and the port only when not 5060: the digest `uri` is this text exactly as sent
  return `sip:${to.replace(/^\+/, "")}@${host}${trunk.port === 5060 ? "" : `:${trunk.port}`}`;
}
