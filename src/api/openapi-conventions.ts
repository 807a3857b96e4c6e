// What the route schemas cannot say about the HTTP conventions of design.md, added to the OpenAPI
// document: Idempotency-Key on every POST (409, 422, Idempotent-Replayed), ETag and If-None-Match (304)
// on every read by id, If-Match (412) on every PUT and DELETE by id. The same rules as the plugins
// (idempotency.ts, etags.ts) apply them, so the document cannot promise more than the API does.
import { isObject } from "../lib/is-object";
import { ErrorEnvelope } from "../models/common";
import { IDEMPOTENCY_HEADER, MAX_KEY_LENGTH, REPLAYED_HEADER } from "./idempotency";
import { errorResponse, operationsOf, ref, STATUS_TEXT } from "./openapi-parts";

type Doc = Record<string, unknown>;

const components = {
  schemas: { ErrorEnvelope: JSON.parse(JSON.stringify(ErrorEnvelope)) },
  parameters: {
    IdempotencyKey: {
      name: IDEMPOTENCY_HEADER,
      in: "header",
      required: false,
      description:
        "Makes a retry safe: the first response is kept 24 h per token scope, method, path and key and replayed for a repeat with the same body.",
      schema: { type: "string", minLength: 1, maxLength: MAX_KEY_LENGTH, pattern: "^[\\x20-\\x7E]+$" },
    },
    IfMatch: {
      name: "If-Match",
      in: "header",
      required: false,
      description: 'Apply only while the resource still has one of these ETags (or "*"); 412 otherwise.',
      schema: { type: "string" },
    },
    IfNoneMatch: {
      name: "If-None-Match",
      in: "header",
      required: false,
      description: "Answer 304 without a body while the resource still has one of these ETags.",
      schema: { type: "string" },
    },
  },
  headers: {
    ETag: { description: "Strong entity tag of the resource's current state", schema: { type: "string" } },
    IdempotentReplayed: {
      description: "Present on a response replayed for a repeated Idempotency-Key",
      schema: { type: "string", enum: ["true"] },
    },
  },
};

const byId = (path: string) => /\/\{\w+\}$/.test(path);
const isSuccess = (status: string) => /^2\d\d$/.test(status);

function withParameter(operation: Doc, name: string) {
  operation.parameters = [
    ...(Array.isArray(operation.parameters) ? operation.parameters : []),
    ref("parameters", name),
  ];
}

function withHeader(responses: Doc, statuses: (status: string) => boolean, header: string, name: string) {
  for (const [status, response] of Object.entries(responses))
    if (statuses(status) && isObject(response))
      response.headers = { ...(isObject(response.headers) ? response.headers : {}), [header]: ref("headers", name) };
}

export function addHttpConventions(doc: Doc) {
  const existing = isObject(doc.components) ? doc.components : {};
  doc.components = {
    ...existing,
    schemas: { ...(isObject(existing.schemas) ? existing.schemas : {}), ...components.schemas },
    parameters: components.parameters,
    headers: components.headers,
  };
  for (const { path, method, operation } of operationsOf(doc)) {
    const responses = (isObject(operation.responses) ? operation.responses : {}) as Doc;
    operation.responses = responses;
    if (path.startsWith("/api/")) {
      // every API route: the failed-authentication throttle, and the database away (or still migrating)
      responses["429"] ??= errorResponse("429");
      responses["503"] ??= errorResponse("503");
      if (method === "post" || method === "put") responses["413"] ??= errorResponse("413");
    }
    if (method === "post") {
      withParameter(operation, "IdempotencyKey");
      withHeader(responses, isSuccess, REPLAYED_HEADER, "IdempotentReplayed");
      responses["400"] ??= errorResponse("400");
      responses["409"] ??= errorResponse("409");
      responses["422"] = errorResponse("422");
    } else if (method === "get" && byId(path)) {
      withParameter(operation, "IfNoneMatch");
      withHeader(responses, (s) => s === "200", "ETag", "ETag");
      responses["304"] = { description: STATUS_TEXT["304"], headers: { ETag: ref("headers", "ETag") } };
    } else if ((method === "put" || method === "delete") && byId(path)) {
      withParameter(operation, "IfMatch");
      responses["400"] ??= errorResponse("400");
      responses["412"] = errorResponse("412");
    }
  }
}
