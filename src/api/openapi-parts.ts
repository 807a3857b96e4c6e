// What the OpenAPI post-processing steps (openapi-document.ts, openapi-conventions.ts) share.
import { isObject } from "../lib/is-object";

type Doc = Record<string, unknown>;
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

/** The description of a response that has none of its own. */
export const STATUS_TEXT: Record<string, string> = {
  "200": "OK",
  "201": "Created",
  "202": "Accepted: the work was started",
  "304": "Not modified: the ETag in If-None-Match still matches",
  "400": "Invalid input: the envelope's errors name each field",
  "401": "Missing or invalid bearer token",
  "403": "The token has no access to this resource",
  "404": "Not found",
  "409": "Conflict with the stored state, or a request with the same Idempotency-Key is still being processed",
  "412": "If-Match no longer matches: the resource has changed, nothing was changed",
  "413": "Request body too large",
  "422": "The Idempotency-Key was already used with another request body",
  "429":
    "Too many requests: failed authentication attempts from this address, or this token over its rate (Retry-After)",
  "503": "A dependency is unavailable (the database away, or the process still starting): retry after Retry-After",
};

export const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** An error status answered in the envelope (components.schemas.ErrorEnvelope, see openapi-conventions.ts). */
export const errorResponse = (status: string) => ({
  description: STATUS_TEXT[status],
  content: { "application/json": { schema: ref("schemas", "ErrorEnvelope") } },
});

/** The error statuses of a route that answers something else than JSON (XML, audio): documented in the envelope. */
export const errorResponsesOf = (...statuses: string[]) =>
  Object.fromEntries(statuses.map((status) => [status, errorResponse(status)]));

/** Every operation of the document, with its path and method. */
export function* operationsOf(doc: Doc): Generator<{ path: string; method: string; operation: Doc }> {
  if (!isObject(doc.paths)) return;
  for (const [path, item] of Object.entries(doc.paths))
    for (const method of METHODS)
      if (isObject(item) && isObject(item[method])) yield { path, method, operation: item[method] as Doc };
}
