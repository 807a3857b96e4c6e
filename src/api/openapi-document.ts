// The one post-processing step between the swagger plugin's generated document and /swagger/json, so that
// the document is valid for the tools clients feed it to (Redocly, Spectral, openapi-typescript; see
// docs/api.md, "The OpenAPI document"). The plugin writes TypeBox's JSON Schema (type "null", const,
// patternProperties: OpenAPI 3.1's dialect) under an "openapi: 3.0.3" label, documents t.Date() as
// "Date or date-time or date or number", lists form and text media types the API never speaks, and
// leaves responses without descriptions. Each fix below is one function; the conventions the schemas
// cannot express (idempotency and ETag headers and statuses) are added by openapi-conventions.ts.
import { isObject } from "../lib/is-object";
import { DOCUMENTED_AS } from "../models/documented-as";
import { addHttpConventions } from "./openapi-conventions";
import { operationsOf, STATUS_TEXT } from "./openapi-parts";

type Doc = Record<string, unknown>;
/** t.Date() becomes what the API sends: an ISO 8601 string. */
function timestampsAsStrings(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(timestampsAsStrings);
  if (!isObject(node)) return node;
  const isDate =
    node.type === "Date" || (Array.isArray(node.anyOf) && node.anyOf.some((s) => isObject(s) && s.type === "Date"));
  if (isDate) {
    const { anyOf: _, type: __, ...rest } = node;
    return { ...rest, type: "string", format: "date-time" };
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, timestampsAsStrings(v)]));
}

/** A schema marked with DOCUMENTED_AS (src/models/documented-as.ts) becomes what it is documented as; its components go to `found`. */
function documentedShapes(node: unknown, found: Doc): unknown {
  if (Array.isArray(node)) return node.map((n) => documentedShapes(n, found));
  if (!isObject(node)) return node;
  const marked = node[DOCUMENTED_AS];
  if (isObject(marked)) {
    const { "x-components": shapes, ...documented } = marked;
    // a shape may hold marked schemas itself (a scenario's criteria)
    if (isObject(shapes)) Object.assign(found, documentedShapes(JSON.parse(JSON.stringify(shapes)), found));
    return documentedShapes(JSON.parse(JSON.stringify(documented)), found);
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, documentedShapes(v, found)]));
}

/** Elysia's run-time switch (src/models/common.ts: noValidate) is no JSON Schema keyword. */
function withoutRuntimeFlags(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutRuntimeFlags);
  if (!isObject(node)) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => k !== "noValidate")
      .map(([k, v]) => [k, withoutRuntimeFlags(v)]),
  );
}

/** The API reads and writes JSON only (src/app.ts onParse); other listed media types are dropped. */
function jsonOnly(content: unknown) {
  if (!isObject(content) || !("application/json" in content)) return;
  for (const type of Object.keys(content)) if (type !== "application/json") delete content[type];
}

function describeResponses(operation: Doc) {
  if (!isObject(operation.responses)) return;
  for (const [status, response] of Object.entries(operation.responses)) {
    if (!isObject(response)) continue;
    jsonOnly(response.content);
    response.description ??= STATUS_TEXT[status] ?? `HTTP ${status}`;
  }
}

/** The document as served: valid OpenAPI 3.1. */
export function publishableDocument(generated: Doc): Doc {
  const shapes: Doc = {};
  const doc = timestampsAsStrings(documentedShapes(generated, shapes)) as Doc;
  doc.openapi = "3.1.0";
  // relative: the document is served by the API it describes, at whatever address it is reached
  doc.servers = [{ url: "/", description: "this service" }];
  addHttpConventions(doc);
  const components = doc.components as Doc;
  components.schemas = { ...(isObject(components.schemas) ? components.schemas : {}), ...shapes };
  for (const { operation } of operationsOf(doc)) {
    // a knowledge document may also be sent as text (src/api/knowledge-bases.ts marks that operation)
    if (isObject(operation.requestBody) && !operation["x-text-bodies"]) jsonOnly(operation.requestBody.content);
    delete operation["x-text-bodies"];
    // an operation without parameters has no use for an empty list
    if (Array.isArray(operation.parameters) && operation.parameters.length === 0) delete operation.parameters;
    describeResponses(operation);
  }
  // every tag an operation uses is declared once, in order of first use
  const tags = new Set<string>();
  for (const { operation } of operationsOf(doc))
    for (const tag of Array.isArray(operation.tags) ? operation.tags : []) tags.add(String(tag));
  doc.tags = [...tags].map((name) => ({ name }));
  return withoutRuntimeFlags(doc) as Doc;
}
