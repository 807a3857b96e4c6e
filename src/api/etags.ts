// ETag and conditional requests (design.md, "HTTP conventions"). A read by id (a GET route whose last
// segment is its id) answers a strong ETag computed from the data it returns, so it depends only on the
// stored state; If-None-Match answers 304. A PUT or DELETE with If-Match is checked against the ETag
// the same read gives now (through the app itself, with the caller's token): 412 when no tag matches,
// before the handler runs, so nothing changes. A malformed If-Match is 400. Conditional writes to one
// resource hold a lock shared by all instances from the check until the response is sent (write-locks.ts).
import { Elysia } from "elysia";
import { etagOf, matchesStrongly, matchesWeakly, parseTagCondition } from "./etag-match";
import { AppError } from "../errors";
import type { WriteLock } from "../db/write-locks";

/** The app's own request handler, to read the current representation of what a PUT or DELETE targets. */
export type ReadThrough = (request: Request) => Promise<Response>;

const readById = (method: string, route: string) => method === "GET" && /\/:\w+$/.test(route);

const malformedIfMatch = () =>
  new AppError("BAD_REQUEST", 'If-Match: not "*" or a list of entity tags', [
    { field: "If-Match", message: 'not "*" or a list of entity tags' },
  ]);

/** The current ETag; null when there is no such resource (or no read by id for it). */
async function currentEtag(readThrough: ReadThrough, request: Request): Promise<string | null> {
  const authorization = request.headers.get("authorization");
  const read = await readThrough(
    new Request(request.url, { method: "GET", headers: authorization ? { authorization } : {} }),
  );
  if (read.status === 404) return null;
  const etag = read.status === 200 ? read.headers.get("etag") : null;
  // fail closed: a condition that cannot be evaluated does not hold
  if (!etag) throw new AppError("PRECONDITION_FAILED", "If-Match: the current state could not be read to compare");
  return etag;
}

const held = new WeakMap<Request, () => void>();

export const etags = ({ readThrough, lock }: { readThrough: ReadThrough; lock: WriteLock }) =>
  new Elysia({ name: "etags" })
    .onBeforeHandle({ as: "global" }, async ({ request }) => {
      if (request.method !== "PUT" && request.method !== "DELETE") return;
      const header = request.headers.get("if-match");
      if (header === null) return;
      const condition = parseTagCondition(header);
      if (!condition) throw malformedIfMatch();
      const release = await lock(`conditional-write:${new URL(request.url).pathname}`);
      held.set(request, release);
      const current = await currentEtag(readThrough, request);
      // no such resource: the handler answers as it would without the condition (404)
      if (current === null) return;
      if (!matchesStrongly(condition, current))
        throw new AppError("PRECONDITION_FAILED", "If-Match: the resource has changed since that ETag; read it again");
    })
    // after every answer, errors included
    .onAfterResponse({ as: "global" }, ({ request }) => {
      held.get(request)?.();
      held.delete(request);
    })
    .mapResponse({ as: "global" }, ({ request, route, responseValue, set }) => {
      if (!readById(request.method, route) || (set.status ?? 200) !== 200) return;
      if (typeof responseValue !== "object" || responseValue === null || !("data" in responseValue)) return;
      const etag = etagOf(responseValue.data);
      set.headers.etag = etag;
      const header = request.headers.get("if-none-match");
      // a value that does not parse is ignored: the full answer is always a correct one
      const condition = header === null ? null : parseTagCondition(header);
      if (condition && matchesWeakly(condition, etag)) {
        set.status = 304;
        return new Response(null, { status: 304, headers: { etag } });
      }
    });
