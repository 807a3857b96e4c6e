// GET /metrics in the Prometheus text format, for Bun servers (a Response) and for the worker on Node
// (its own small HTTP server, since it serves nothing else).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { registry } from "./metrics";

export async function metricsResponse(): Promise<Response> {
  return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
}

/** Serves GET /metrics (and GET /healthz) on `port` (0 picks a free one). */
export async function startMetricsServer(port: number, host = "0.0.0.0") {
  const server: Server = createServer((req, res) => {
    const path = req.url?.split("?")[0];
    if (req.method === "GET" && path === "/metrics") {
      registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
        (error: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(error.message),
      );
    } else if (req.method === "GET" && path === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: GET /metrics");
    }
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    // scrapers keep connections alive: close them, or close() waits for their idle time-out
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
