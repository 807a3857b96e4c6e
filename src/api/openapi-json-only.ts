// The swagger plugin lists application/json, multipart/form-data and text/plain for every request body;
// the API refuses all but JSON (src/app.ts onParse), so the served document lists JSON only.
import { isObject } from "../lib/is-object";

export function jsonRequestBodiesOnly(doc: Record<string, unknown>) {
  if (!isObject(doc.paths)) return doc;
  for (const operations of Object.values(doc.paths)) {
    if (!isObject(operations)) continue;
    for (const operation of Object.values(operations)) {
      const content = isObject(operation) && isObject(operation.requestBody) ? operation.requestBody.content : null;
      if (!isObject(content)) continue;
      for (const type of Object.keys(content)) if (type !== "application/json") delete content[type];
    }
  }
  return doc;
}
