// A Temporal client for the configured server; callers own the connection and close it.
import { Client, Connection } from "@temporalio/client";
import { temporalConnectionOptions, type TemporalEndpoint } from "./connection-options";

export async function connectTemporal(config: TemporalEndpoint, options: { connectTimeoutMs?: number } = {}) {
  const connection = await Connection.connect({
    ...temporalConnectionOptions(config),
    connectTimeout: options.connectTimeoutMs ?? 5_000,
  });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  return { client, connection, close: () => connection.close() };
}
