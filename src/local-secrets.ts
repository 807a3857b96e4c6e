// For local runs only: ENCRYPTION_KEY, ADMIN_TOKEN and METRICS_TOKEN, when unset, are generated once into the
// git-ignored .data/ folder and reused, so a restart can still read the secrets it stored.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

export const dataDir = fileURLToPath(new URL("../.data/", import.meta.url));

function persisted(name: string, make: () => string): string {
  mkdirSync(dataDir, { recursive: true });
  const file = dataDir + name;
  if (!existsSync(file)) writeFileSync(file, `${make()}\n`, { mode: 0o600 });
  return readFileSync(file, "utf8").trim();
}

export function localSecrets(env: Record<string, string | undefined>) {
  return {
    ENCRYPTION_KEY: env.ENCRYPTION_KEY || persisted("encryption.key", () => randomBytes(32).toString("hex")),
    ADMIN_TOKEN: env.ADMIN_TOKEN || persisted("admin-token", () => `admin_${randomBytes(24).toString("base64url")}`),
    // /metrics on the API port wants it (docs/metrics.md); unless METRICS_PORT serves them apart
    METRICS_TOKEN:
      env.METRICS_TOKEN ||
      (env.METRICS_PORT ? "" : persisted("metrics-token", () => `metrics_${randomBytes(24).toString("base64url")}`)),
  };
}
