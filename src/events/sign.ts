// Standard Webhooks signing (https://www.standardwebhooks.com): HMAC-SHA256 over "id.timestamp.body".
import { createHmac } from "node:crypto";

const PREFIX = "whsec_";

/**
 * Key bytes of a hook secret. "whsec_<base64>" is the Standard Webhooks form: the rest is the
 * base64-encoded key. Any other string is used as its UTF-8 bytes, so a plain shared password works too.
 */
export function secretKeyBytes(secret: string): Buffer {
  if (secret.startsWith(PREFIX)) {
    const key = Buffer.from(secret.slice(PREFIX.length), "base64");
    if (key.length === 0) throw new Error("whsec_ secret has no key bytes");
    return key;
  }
  return Buffer.from(secret, "utf8");
}

export type SignatureHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

/** Headers for one attempt; `body` must be the exact bytes that go on the wire. */
export function signWebhook(input: {
  id: string;
  timestampSec: number;
  body: Buffer | string;
  secret: string;
}): SignatureHeaders {
  const timestamp = String(Math.floor(input.timestampSec));
  const mac = createHmac("sha256", secretKeyBytes(input.secret));
  mac.update(`${input.id}.${timestamp}.`);
  mac.update(input.body);
  return {
    "webhook-id": input.id,
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${mac.digest("base64")}`,
  };
}
