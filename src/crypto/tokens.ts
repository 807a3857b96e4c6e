import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const PREFIX = "vas_";

/** A new API token: the plain value is shown once; only its hash is stored. */
export function generateToken() {
  const plain = PREFIX + randomBytes(32).toString("base64url");
  return { plain, hash: hashToken(plain), prefix: plain.slice(0, PREFIX.length + 6) };
}

// Tokens carry 256 bits of entropy, so a fast unsalted hash is enough for lookup by hash.
export function hashToken(plain: string) {
  return createHash("sha256").update(plain).digest("hex");
}

export function safeEqual(a: string, b: string) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
