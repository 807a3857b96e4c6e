// Who may read /metrics on a port the world reaches (the API's, the bridge's): the holder of the
// METRICS_TOKEN bearer. The API port serves none without it (METRICS_PORT serves them apart); the bridge
// port stays open without it, since scrapers reach bridges on their internal address (docs/metrics.md).
import { safeEqual } from "../crypto/tokens";

const text = (status: number, body: string) =>
  new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });

/** null when `request` may read the metrics; else the answer that refuses it. */
export function refuseMetrics(request: Request, token: string | null, openWithoutToken: boolean): Response | null {
  if (token === null)
    return openWithoutToken ? null : text(404, "not served here: set METRICS_TOKEN or METRICS_PORT (docs/metrics.md)");
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (presented !== undefined && safeEqual(presented, token)) return null;
  const refused = text(401, "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>");
  refused.headers.set("www-authenticate", 'Bearer realm="metrics"');
  return refused;
}
