// How to reach the configured Temporal server, shared by the client (API, probes) and the worker's
// native connection: plain on a local server, TLS with an API key on Temporal Cloud.
import type { Config } from "../config";

export function temporalConnectionOptions(config: Pick<Config, "temporal">) {
  const { address, tls, apiKey } = config.temporal;
  return { address, ...(tls ? { tls: true as const } : {}), ...(apiKey ? { apiKey } : {}) };
}
