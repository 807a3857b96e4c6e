// createApp builds the HTTP application from its dependencies; it never listens by itself.
import type { Server } from "bun";
import { Elysia } from "elysia";
import { swagger } from "@elysiajs/swagger";
import { randomUUID } from "node:crypto";
import type { Deps } from "./api/deps";
import { toErrorResponse } from "./api/errors";
import { healthRoutes } from "./api/health";
import { tenancyRoutes } from "./api/tenancy";
import { agentsRoutes, assistantsRoutes } from "./api/assistants";
import { strategiesRoutes } from "./api/strategies";
import { phoneNumbersRoutes, sipCredentialsRoutes } from "./api/sip";
import { callsRoutes } from "./api/calls";
import { agentTasksRoutes } from "./api/agent-tasks";
import { hookDeliveriesRoutes } from "./api/hook-deliveries";
import { readJsonBody } from "./api/json-body";
import { jsonRequestBodiesOnly } from "./api/openapi-json-only";
import { log } from "./log";
import { recordHttpRequest } from "./metrics/metrics";
import { metricsResponse } from "./metrics/serve";
import { consoleRoutes } from "./console/serve";
import { AppError } from "./errors";

const unsupportedBody = () =>
  new AppError("BAD_REQUEST", "request bodies must be JSON (Content-Type: application/json)", [
    { field: "body", message: "not JSON" },
  ]);

type RequestInfo = { traceId: string; start: number };
const requests = new WeakMap<Request, RequestInfo>();

// Honour an incoming trace: W3C traceparent's trace-id, else x-request-id, else a new id.
function traceIdOf(request: Request): string {
  const traceparent = request.headers.get("traceparent");
  const fromParent = traceparent?.split("-")[1];
  if (fromParent && /^[0-9a-f]{32}$/.test(fromParent)) return fromParent;
  const requestId = request.headers.get("x-request-id");
  if (requestId && /^[\w.:-]{1,128}$/.test(requestId)) return requestId;
  return randomUUID();
}

function infoOf(request: Request): RequestInfo {
  const known = requests.get(request);
  if (known) return known;
  const info = { traceId: traceIdOf(request), start: performance.now() };
  requests.set(request, info);
  return info;
}

function json(status: number, body: unknown, traceId: string, retryAfterSec?: number) {
  const headers: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "x-request-id": traceId,
  };
  if (retryAfterSec !== undefined) headers["retry-after"] = String(retryAfterSec);
  // a refused body was not read to its end: the connection cannot carry another request
  if (status === 413) headers.connection = "close";
  return new Response(JSON.stringify(body), { status, headers });
}

/** The peer's address (no X-Forwarded-For: a client could write any). */
const sourceOf = (server: Server<unknown> | null, request: Request) => server?.requestIP(request)?.address ?? null;

export function createApp(deps: Deps) {
  return (
    new Elysia({ normalize: false })
      .onRequest(({ request, server }) => {
        infoOf(request);
        // an address over its failed-authentication limit is refused before parsing or any database work
        if (new URL(request.url).pathname.startsWith("/api/"))
          deps.tokens.admit(sourceOf(server, request), request.headers.get("authorization"));
      })
      // the API speaks JSON only; a form or text body is refused rather than coerced. Size and depth
      // are bounded while reading (413 / 400), before any validator walks the body.
      .onParse(({ request, contentType }) => {
        if (contentType && !contentType.toLowerCase().startsWith("application/json")) throw unsupportedBody();
        return readJsonBody(request);
      })
      .onError(({ code, error, request, set, server }) => {
        const { traceId } = infoOf(request);
        const [status, body] = toErrorResponse(code, error, traceId);
        if (status === 401) deps.tokens.failed(sourceOf(server, request));
        set.status = status;
        return json(status, body, traceId, error instanceof AppError ? error.retryAfterSec : undefined);
      })
      .mapResponse(({ request, responseValue, set }) => {
        if (responseValue instanceof Response || typeof responseValue !== "object" || responseValue === null) return;
        const { traceId } = infoOf(request);
        const body =
          "success" in responseValue
            ? { ...responseValue, traceId }
            : new URL(request.url).pathname === "/swagger/json"
              ? jsonRequestBodiesOnly(responseValue as Record<string, unknown>)
              : responseValue;
        return json(typeof set.status === "number" ? set.status : 200, body, traceId);
      })
      .onAfterResponse(({ request, set, path, route }) => {
        const info = infoOf(request);
        const status = typeof set.status === "number" ? set.status : 200;
        const durationMs = performance.now() - info.start;
        log.info("request", {
          traceId: info.traceId,
          method: request.method,
          path,
          status,
          durationMs: Math.round(durationMs * 100) / 100,
        });
        // the route pattern, not the path: ids would make one series per resource
        recordHttpRequest({ method: request.method, route: route || "unmatched", status, seconds: durationMs / 1000 });
      })
      .use(
        swagger({
          path: "/swagger",
          documentation: {
            info: {
              title: "Voice AI Assistant Management Service",
              version: "1.0",
              description:
                "Manage voice AI assistants and agents, LLM strategies, SIP credentials and phone numbers; inspect calls and hook deliveries.",
            },
            components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
            security: [{ bearer: [] }],
          },
        }),
      )
      .use(healthRoutes(deps))
      .get("/metrics", () => metricsResponse(), { detail: { hide: true } })
      .use(consoleRoutes(deps.config))
      .use(tenancyRoutes(deps))
      .use(assistantsRoutes(deps))
      .use(agentsRoutes(deps))
      .use(strategiesRoutes(deps))
      .use(sipCredentialsRoutes(deps))
      .use(phoneNumbersRoutes(deps))
      .use(agentTasksRoutes(deps))
      .use(callsRoutes(deps))
      .use(hookDeliveriesRoutes(deps))
  );
}
