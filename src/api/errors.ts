// The one place where failures become HTTP statuses and envelopes.
import { isDatabaseUnavailable } from "../db/unavailable";
import {
  AppError,
  databaseUnavailable,
  describeError,
  errorStatus,
  fieldName,
  issueMessage,
  pgErrorCode,
  type FieldError,
} from "../errors";
import { log } from "../log";
import { failure } from "../models/envelope";

function validationErrors(error: unknown): FieldError[] {
  const all = (error as { all?: { path?: string; message?: string; summary?: string; type?: unknown }[] }).all ?? [];
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const issue of all) {
    const field = fieldName(issue.path ?? "");
    if (seen.has(field)) continue; // the first message per field is the most specific one
    seen.add(field);
    errors.push({ field, message: issueMessage(issue) });
  }
  return errors.length ? errors : [{ field: "body", message: "invalid request" }];
}

/** Maps any thrown value to [status, envelope]. Unknown errors are logged and hidden behind a 500. */
export function toErrorResponse(
  code: string | number,
  error: unknown,
  traceId: string,
): [number, Record<string, unknown>] {
  const body = (status: number, message: string, errors?: FieldError[]): [number, Record<string, unknown>] => [
    status,
    { ...failure(message, errors), traceId },
  ];

  // Elysia wraps what a body parser throws; the body reader's own refusals (413, depth) come through as they are
  const cause = code === "PARSE" ? (error as { cause?: unknown }).cause : undefined;
  if (cause instanceof AppError) return body(cause.status, cause.message, cause.errors);
  if (error instanceof AppError) return body(error.status, error.message, error.errors);
  // an answer off its own schema (checked where API_CHECK_RESPONSES=true) is our bug, not the client's
  if (code === "VALIDATION" && (error as { type?: string }).type === "response") {
    // where and what, not the answer itself
    const first = validationErrors(error)[0];
    log.error("an answer does not match its schema", { traceId, field: first?.field, problem: first?.message });
    return body(500, "internal error");
  }
  if (code === "VALIDATION") {
    const errors = validationErrors(error);
    return body(400, `invalid input: ${errors.map((e) => e.field).join(", ")}`, errors);
  }
  if (code === "PARSE")
    return body(400, "malformed request body: expected JSON", [{ field: "body", message: "not valid JSON" }]);
  if (code === "NOT_FOUND") return body(404, "no such route");
  if (code === "INVALID_COOKIE_SIGNATURE" || code === "INVALID_FILE_TYPE") return body(400, "invalid request");
  if (isDatabaseUnavailable(error)) {
    const unavailable = databaseUnavailable();
    return body(unavailable.status, unavailable.message);
  }
  const pg = pgErrorCode(error);
  if (pg === "22P02" || pg === "22003" || pg === "22021" || pg === "22P05" || pg === "54000")
    return body(400, "a value is out of range or malformed", [{ field: "body", message: "invalid value" }]);
  if (pg === "23505") return body(errorStatus.CONFLICT, "conflicts with an existing resource");
  if (pg === "23503") return body(errorStatus.CONFLICT, "the resource is referenced by or references another resource");
  log.error("unhandled error", { traceId, error: describeError(error) });
  return body(500, "internal error");
}
