// AES-256-GCM for secrets the service must read back (SIP passwords, hook signing secrets).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = "v1";

export type SecretBox = { encrypt(plain: string): string; decrypt(sealed: string): string };

export function createSecretBox(key: Buffer | null): SecretBox {
  const need = () => {
    if (!key) throw new Error("ENCRYPTION_KEY is not set: cannot store or read secrets");
    return key;
  };
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", need(), iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return [VERSION, iv.toString("base64"), cipher.getAuthTag().toString("base64"), body.toString("base64")].join(
        ":",
      );
    },
    decrypt(sealed) {
      const [version, iv, tag, body] = sealed.split(":");
      if (version !== VERSION || !iv || !tag || body === undefined) throw new Error("unreadable sealed secret");
      const decipher = createDecipheriv("aes-256-gcm", need(), Buffer.from(iv, "base64"));
      decipher.setAuthTag(Buffer.from(tag, "base64"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8");
    },
  };
}
