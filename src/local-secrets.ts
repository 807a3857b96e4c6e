// For local runs only: ENCRYPTION_KEY, ADMIN_TOKEN and METRICS_TOKEN, when unset, are generated once into the
// git-ignored .data/ folder and reused, so a restart can still read the secrets it stored; so are the
// credentials of the local S3 server `make start` runs for RECORDING_STORE=s3 without S3_ENDPOINT.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { localS3Ports } from "./config";

export const dataDir = fileURLToPath(new URL("../.data/", import.meta.url));

function persisted(name: string, make: () => string): string {
  mkdirSync(dataDir, { recursive: true });
  const file = dataDir + name;
  if (!existsSync(file)) writeFileSync(file, `${make()}\n`, { mode: 0o600 });
  return readFileSync(file, "utf8").trim();
}

/** RECORDING_STORE=s3 without S3_ENDPOINT: the local S3 server's address (src/start.ts), bucket and credentials. */
const localS3Env = (env: Record<string, string | undefined>) =>
  env.RECORDING_STORE === "s3" && !env.S3_ENDPOINT
    ? {
        S3_ENDPOINT: `http://127.0.0.1:${localS3Ports(env).s3}`,
        S3_BUCKET: env.S3_BUCKET || "recordings",
        S3_ACCESS_KEY_ID: env.S3_ACCESS_KEY_ID || "local",
        S3_SECRET_ACCESS_KEY:
          env.S3_SECRET_ACCESS_KEY || persisted("s3-secret-key", () => randomBytes(24).toString("base64url")),
      }
    : {};

export function localSecrets(env: Record<string, string | undefined>) {
  return {
    ...localS3Env(env),
    ENCRYPTION_KEY: env.ENCRYPTION_KEY || persisted("encryption.key", () => randomBytes(32).toString("hex")),
    ADMIN_TOKEN: env.ADMIN_TOKEN || persisted("admin-token", () => `admin_${randomBytes(24).toString("base64url")}`),
    // /metrics on the API port wants it (docs/metrics.md); unless METRICS_PORT serves them apart
    METRICS_TOKEN:
      env.METRICS_TOKEN ||
      (env.METRICS_PORT ? "" : persisted("metrics-token", () => `metrics_${randomBytes(24).toString("base64url")}`)),
  };
}
