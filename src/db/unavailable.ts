// Which failures mean "the database is away" (refused, reset, silent past the deadline, shutting down)
// rather than "this statement is wrong": the first kind is a 503 with Retry-After and a call refused
// for now, the second a bug or a 4xx.

/** A statement refused at once (the database is known to be away) or given up at its deadline. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
}

// node/Bun socket errors and postgres.js's own connection errors
const connectionCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ConnectionRefused",
  "ConnectionClosed",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
]);

/** True when `error` (or what drizzle wrapped in it) says the database could not be reached. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    if (connectionCodes.has(code)) return true;
    // SQLSTATE class 08 (connection exception), 57P01-57P03 (shutting down, crashed, not yet accepting)
    if (/^08[0-9A-Z]{3}$/.test(code) || code === "57P01" || code === "57P02" || code === "57P03") return true;
  }
  return false;
}

/**
 * `work` (database reads and writes) bounded by a budget shorter than the statement deadline: past it
 * the database counts as away for this caller (a call is refused within 2 s, not after 5), unless
 * `answering()` says other statements were answered meanwhile: then the database is slow, not away,
 * and `work` goes on (its statements' own deadline still bounds it).
 */
export function databaseWithin<T>(work: Promise<T>, ms: number, what: string, answering?: () => boolean): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (!answering?.()) reject(new DatabaseUnavailableError(`${what}: no answer within ${ms} ms`));
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
