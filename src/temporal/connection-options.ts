// How to reach the configured Temporal server, shared by the client (API, probes) and the worker's
// native connection: plain on a local server, TLS with an API key on Temporal Cloud.
import type { Config } from "../config";

/** Where the server is and how to reach it: what connecting needs of the config (not its task queues). */
export type TemporalEndpoint = { temporal: Pick<Config["temporal"], "address" | "namespace" | "apiKey" | "tls"> };

export function temporalConnectionOptions(config: TemporalEndpoint) {
  const { address, tls, apiKey } = config.temporal;
  return { address, ...(tls ? { tls: true as const } : {}), ...(apiKey ? { apiKey } : {}) };
}
