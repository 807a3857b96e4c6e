// A body the route could not declare as its schema (JSON or another type, checked after conversion):
// every failing field named once, as Elysia's own validation would (400 in the error envelope).
import type { TSchema, Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { AppError, fieldName, type FieldError } from "../errors";

export function checkBody<S extends TSchema>(schema: S, body: unknown): Static<S> {
  const errors: FieldError[] = [];
  for (const error of Value.Errors(schema, body ?? {}))
    if (!errors.some((e) => e.field === fieldName(error.path)))
      errors.push({ field: fieldName(error.path), message: error.message });
  if (errors.length)
    throw new AppError("BAD_REQUEST", `invalid input: ${errors.map((e) => e.field).join(", ")}`, errors);
  return body as Static<S>;
}
