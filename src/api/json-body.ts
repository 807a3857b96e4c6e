// Reads a JSON request body within limits: the size is enforced while the stream arrives (a declared
// Content-Length over the limit is refused before a byte is read), and the nesting depth is measured
// by an iterative scan before JSON.parse, so neither a huge nor a deeply nested body can exhaust
// memory or the stack of the validators that walk it.
import { AppError, fieldName, type FieldError } from "../errors";

/** Documented in docs/api.md and docs/security.md. */
export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_JSON_DEPTH = 64;
/** A knowledge document may be larger than any other body (docs/knowledge.md). */
export const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
const DOCUMENTS_PATH = /^\/api\/v1\/vendors\/[^/]+\/organizations\/[^/]+\/knowledge-bases\/[^/]+\/documents\/?$/;

/** The only route whose body may be plain text, Markdown or HTML, and up to MAX_DOCUMENT_BYTES. */
export const isDocumentUpload = (request: Request) =>
  request.method === "POST" && DOCUMENTS_PATH.test(new URL(request.url).pathname);

const CAMPAIGNS_PATH = /^\/api\/v1\/vendors\/[^/]+\/organizations\/[^/]+\/campaigns\/?$/;

/** A campaign's creation: its 10,000 contacts may come as JSON or text/csv, up to MAX_DOCUMENT_BYTES. */
export const isCampaignCreate = (request: Request) =>
  request.method === "POST" && CAMPAIGNS_PATH.test(new URL(request.url).pathname);

const limitOf = (request: Request) =>
  isDocumentUpload(request) || isCampaignCreate(request) ? MAX_DOCUMENT_BYTES : MAX_BODY_BYTES;

const tooLarge = (limit: number) =>
  new AppError("PAYLOAD_TOO_LARGE", `request body larger than ${limit} bytes`, [
    { field: "body", message: `at most ${limit} bytes` },
  ]);

/** 413 before reading when the declared length is over the limit. */
export function refuseDeclaredOversize(request: Request) {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > limitOf(request)) throw tooLarge(limitOf(request));
}

/** The body as text, within the size limit (413 otherwise). */
export async function readBodyText(request: Request): Promise<string> {
  refuseDeclaredOversize(request);
  return readLimited(request, limitOf(request));
}

/** The parsed body; null when it is empty. Throws AppError 413 or 400. */
export async function readJsonBody(request: Request): Promise<unknown> {
  const text = await readBodyText(request);
  // no body (a DELETE, say): the route's schema decides whether one was needed
  if (text.trim() === "") return null;
  const tooDeep = depthViolation(text, MAX_JSON_DEPTH);
  if (tooDeep) throw new AppError("BAD_REQUEST", `${tooDeep.field}: ${tooDeep.message}`, [tooDeep]);
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("BAD_REQUEST", "malformed request body: expected JSON", [
      { field: "body", message: "not valid JSON" },
    ]);
  }
}

async function readLimited(request: Request, limit: number): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The first place where `text` nests deeper than `maxDepth`, named like a validation error
 * ("extensions[0].parameters.a.a"), or null. One pass, no recursion; strings are skipped.
 */
export function depthViolation(text: string, maxDepth: number): FieldError | null {
  // path segments of the open containers, as JSON pointer parts (only the first few are named)
  const path: string[] = [];
  const arrayIndex: number[] = [];
  const NAMED = 8;
  let depth = 0;
  let lastKey = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i + 1;
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
      // a string followed by ':' is a key; only its raw text is needed for naming
      if (depth <= NAMED) lastKey = text.slice(start, Math.min(i, start + 64));
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth > 0 && depth <= NAMED)
        path.push(isArrayAt(arrayIndex, depth) ? String(arrayIndex[depth - 1]) : lastKey);
      depth++;
      arrayIndex[depth - 1] = c === 0x5b ? 0 : -1;
      if (depth > maxDepth)
        return { field: fieldName(`/${path.join("/")}`), message: `nested deeper than ${maxDepth} levels` };
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      if (depth > 0 && depth <= NAMED) path.pop();
    } else if (c === 0x2c /* , */ && depth > 0 && arrayIndex[depth - 1]! >= 0) {
      arrayIndex[depth - 1]!++;
    }
  }
  return null;
}

const isArrayAt = (arrayIndex: number[], depth: number) => (arrayIndex[depth - 1] ?? -1) >= 0;
