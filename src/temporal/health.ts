// Readiness probe for /readyz: the Temporal frontend answers its gRPC health check.
import { connectTemporal } from "./client";
import type { TemporalEndpoint } from "./connection-options";

export async function isTemporalReachable(config: TemporalEndpoint, timeoutMs = 2_000): Promise<boolean> {
  let conn: Awaited<ReturnType<typeof connectTemporal>> | undefined;
  try {
    conn = await connectTemporal(config, { connectTimeoutMs: timeoutMs });
    const { connection } = conn;
    const res = await connection.withDeadline(Date.now() + timeoutMs, () => connection.healthService.check({}));
    return res.status === 1; // SERVING
  } catch {
    return false;
  } finally {
    await conn?.close().catch(() => {});
  }
}
