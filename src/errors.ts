import type { TSchema } from "@sinclair/typebox";
import { Value, ValueErrorType } from "@sinclair/typebox/value";
// Every failure a client can see is an AppError; its code maps to a status in exactly one place.
export const errorStatus = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNPROCESSABLE: 422,
  TOO_MANY_REQUESTS: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;
export type FieldError = { field: string; message: string };

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldError[],
    /** sent as Retry-After (seconds) */
    readonly retryAfterSec?: number,
  ) {
    super(message);
    this.name = "AppError";
  }
  get status() {
    return errorStatus[this.code];
  }
}

export const badRequest = (field: string, message: string) =>
  new AppError("BAD_REQUEST", `${field}: ${message}`, [{ field, message }]);
export const notFound = (what: string) => new AppError("NOT_FOUND", `${what} not found`);
export const conflict = (message: string) => new AppError("CONFLICT", message);
export const forbidden = (message = "token has no access to this resource") => new AppError("FORBIDDEN", message);
export const unauthorized = (message = "missing or invalid bearer token") => new AppError("UNAUTHORIZED", message);
/** The database is away (or not reached yet at start): the client should retry shortly. */
export const databaseUnavailable = (message = "the database is unavailable; retry shortly") =>
  new AppError("UNAVAILABLE", message, undefined, 1);
export const tooManyRequests = (message: string, retryAfterSec: number) =>
  new AppError("TOO_MANY_REQUESTS", message, undefined, retryAfterSec);

/** A schema keyword: what a value failing the schema's `pattern` must be, said in words instead of the regular expression. */
export const PATTERN_MESSAGE = "x-pattern-message";

/** A validator's message for one failure, in the schema's own words where it has them. */
export function issueMessage(issue: { type?: unknown; schema?: unknown; summary?: string; message?: string }) {
  const words = (issue.schema as Record<string, unknown> | undefined)?.[PATTERN_MESSAGE];
  if (issue.type === ValueErrorType.StringPattern && typeof words === "string") return words;
  return issue.summary ?? issue.message ?? "invalid value";
}

/**
 * What is wrong with `value` against `schema`, the first (most specific) message per field; fields are
 * named under `prefix` ("extensions[0].parameters"), or as they are in a body when there is none.
 */
export function schemaErrors(schema: TSchema, value: unknown, prefix = ""): FieldError[] {
  const errors: FieldError[] = [];
  for (const error of Value.Errors(schema, value)) {
    const field = !error.path
      ? prefix || "body"
      : prefix
        ? `${prefix}.${fieldName(error.path)}`
        : fieldName(error.path);
    if (!errors.some((e) => e.field === field)) errors.push({ field, message: issueMessage(error) });
  }
  return errors;
}

// Validators report JSON pointers ("/extensions/0/parameters"); clients read "extensions[0].parameters".
export function fieldName(pointer: string): string {
  return (
    pointer
      .split("/")
      .filter(Boolean)
      .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
      .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), "") || "body"
  );
}

/** The SQLSTATE of a database error, also when drizzle has wrapped it. */
export function pgErrorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof e?.code === "string" ? e.code : e?.cause?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A loggable description of an unexpected error: never the query parameters drizzle puts in messages. */
export function describeError(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  if (error instanceof Error && !error.message.startsWith("Failed query")) return `${error.name}: ${error.message}`;
  return error instanceof Error ? error.name : typeof error;
}
