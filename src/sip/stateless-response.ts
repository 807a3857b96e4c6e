// A response the endpoint sends on its own (no user agent wants the request): the headers RFC 3261
// §8.2.6.2 says a response copies from its request, a To tag, and no body.
import { randomBytes } from "node:crypto";
import { getHeader, type SipMessage } from "./sip-message";

export function statelessResponse(request: SipMessage, status: number, reason: string): SipMessage | null {
  const copy = (name: string) => request.headers.filter((h) => new RegExp(`^(${name})\\s*:`, "i").test(h));
  const to = getHeader(request, "to");
  if (!to || !getHeader(request, "call-id") || !getHeader(request, "cseq")) return null;
  const tagged = /;\s*tag=/i.test(to) ? to : `${to};tag=${randomBytes(6).toString("hex")}`;
  return {
    startLine: `SIP/2.0 ${status} ${reason}`,
    headers: [
      ...copy("via|v"),
      ...copy("from|f"),
      `To: ${tagged}`,
      ...copy("call-id|i"),
      ...copy("cseq"),
      "Content-Length: 0",
    ],
    body: "",
  };
}
