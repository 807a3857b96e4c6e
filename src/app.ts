// createApp builds the HTTP application from its dependencies; it never listens by itself.
import type { Server } from "bun";
import { Elysia } from "elysia";
import { swagger } from "@elysiajs/swagger";
import { randomUUID } from "node:crypto";
import type { Deps } from "./api/deps";
import { toErrorResponse } from "./api/errors";
import { healthRoutes } from "./api/health";
import { tenancyRoutes } from "./api/tenancy";
import { tokenRoutes } from "./api/token";
import { agentsRoutes, assistantsRoutes } from "./api/assistants";
import { strategiesRoutes } from "./api/strategies";
import { phoneNumbersRoutes, sipCredentialsRoutes } from "./api/sip";
import { callsRoutes } from "./api/calls";
import { campaignsRoutes } from "./api/campaigns";
import { agentTasksRoutes } from "./api/agent-tasks";
import { hookDeliveriesRoutes } from "./api/hook-deliveries";
import { knowledgeBasesRoutes } from "./api/knowledge-bases";
import { testScenariosRoutes, testSuitesRoutes } from "./api/test-scenarios";
import { testRunsRoutes } from "./api/test-runs";
import { isCampaignCreate, isDocumentUpload, readBodyText, readJsonBody } from "./api/json-body";
import { publishableDocument } from "./api/openapi-document";
import { finishIdempotentRequest, idempotency } from "./api/idempotency";
import { etags } from "./api/etags";
import { createWriteLocks } from "./db/write-locks";
import { log } from "./log";
import { pathOf } from "./lib/url-path";
import { recordHttpRequest } from "./metrics/metrics";
import { metricsResponse } from "./metrics/serve";
import { refuseMetrics } from "./metrics/access";
import { consoleRoutes } from "./console/serve";
import { AppError, databaseUnavailable } from "./errors";

const unsupportedBody = () =>
  new AppError("BAD_REQUEST", "request bodies must be JSON (Content-Type: application/json)", [
    { field: "body", message: "not JSON" },
  ]);

const DOCUMENT_TYPES = ["text/plain", "text/markdown", "text/html"];

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

type ResponseSet = { status?: number | string; headers: Record<string, string | number> };

// Every answer the API builds passes here, so a POST holding an Idempotency-Key keeps exactly what was sent.
// The text is returned and the headers go on `set`: Elysia then makes the one Response (a Response returned
// here would be copied into a second one to merge `set`'s headers: a tenth of a cached read's CPU).
async function json(
  request: Request,
  set: ResponseSet,
  status: number,
  body: unknown,
  traceId: string,
  retryAfterSec?: number,
) {
  const text = JSON.stringify(body);
  await finishIdempotentRequest(request, status, text);
  set.status = status;
  set.headers["content-type"] = "application/json; charset=utf-8";
  set.headers["x-request-id"] = traceId;
  if (retryAfterSec !== undefined) set.headers["retry-after"] = String(retryAfterSec);
  // a refused body was not read to its end: the connection cannot carry another request
  if (status === 413) set.headers.connection = "close";
  return text;
}

/** The peer's address (no X-Forwarded-For: a client could write any). */
const sourceOf = (server: Server<unknown> | null, request: Request) => server?.requestIP(request)?.address ?? null;

export function createApp(deps: Deps) {
  // conditional writes read the current representation through the app itself (src/api/etags.ts)
  const readThrough = (request: Request): Promise<Response> => app.handle(request);
  const app = new Elysia({ normalize: false })
    .onRequest(({ request, server }) => {
      infoOf(request);
      const api = pathOf(request.url).startsWith("/api/");
      if (api && !deps.started()) throw databaseUnavailable("starting: waiting for the database");
      // an address over its failed-authentication limit is refused before parsing or any database work
      if (api) deps.tokens.admit(() => sourceOf(server, request), request.headers.get("authorization"));
    })
    // the API speaks JSON only; a form or text body is refused rather than coerced. Size and depth
    // are bounded while reading (413 / 400), before any validator walks the body.
    // The one exception: a knowledge document may be uploaded as text, Markdown or HTML (the route
    // gets the text and the content type: src/api/knowledge-documents.ts).
    .onParse(async ({ request, contentType }) => {
      const type = contentType?.toLowerCase() ?? "";
      if (isDocumentUpload(request) && DOCUMENT_TYPES.some((t) => type.startsWith(t)))
        return { text: await readBodyText(request), contentType: type.split(";")[0]!.trim() };
      // and a campaign's contacts as CSV (src/api/campaigns.ts)
      if (isCampaignCreate(request) && type.startsWith("text/csv"))
        return { text: await readBodyText(request), contentType: "text/csv" };
      if (contentType && !type.startsWith("application/json")) throw unsupportedBody();
      return readJsonBody(request);
    })
    // after the address check above; before parsing, so that a replay does no work at all
    .use(idempotency(deps))
    // before the mapResponse below: a read by id gets its ETag (or a 304) before the envelope is written
    .use(etags({ readThrough, lock: createWriteLocks(deps.db.$client) }))
    .onError(async ({ code, error, request, set, server }) => {
      const { traceId } = infoOf(request);
      const [status, body] = toErrorResponse(code, error, traceId);
      if (status === 401) deps.tokens.failed(sourceOf(server, request));
      // a 503 (the database away) tells the client when to try again
      const retryAfter = error instanceof AppError ? error.retryAfterSec : status === 503 ? 1 : undefined;
      // a Response: Elysia's handler of errors raised before routing (onRequest) would drop a text
      return new Response(await json(request, set, status, body, traceId, retryAfter), set as ResponseInit);
    })
    .mapResponse(async ({ request, responseValue, set }) => {
      if (responseValue instanceof Response || typeof responseValue !== "object" || responseValue === null) return;
      const { traceId } = infoOf(request);
      const body =
        "success" in responseValue
          ? { ...responseValue, traceId }
          : new URL(request.url).pathname === "/swagger/json"
            ? publishableDocument(responseValue as Record<string, unknown>)
            : responseValue;
      const text = await json(request, set, typeof set.status === "number" ? set.status : 200, body, traceId);
      // typed as Elysia's hook wants; a text returned here is made into the one Response with `set`
      return text as unknown as Response;
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
    .get("/metrics", ({ request }) => refuseMetrics(request, deps.config.metrics.token, false) ?? metricsResponse(), {
      detail: { hide: true },
    })
    .use(consoleRoutes(deps.config))
    .use(tokenRoutes(deps))
    .use(tenancyRoutes(deps))
    .use(assistantsRoutes(deps))
    .use(agentsRoutes(deps))
    .use(strategiesRoutes(deps))
    .use(sipCredentialsRoutes(deps))
    .use(phoneNumbersRoutes(deps))
    .use(agentTasksRoutes(deps))
    .use(callsRoutes(deps))
    .use(hookDeliveriesRoutes(deps))
    .use(knowledgeBasesRoutes(deps))
    .use(testScenariosRoutes(deps))
    .use(testSuitesRoutes(deps))
    .use(testRunsRoutes(deps))
    .use(campaignsRoutes(deps));
  return app;
}
