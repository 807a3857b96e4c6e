// A body the route could not declare as its schema (JSON or another type, checked after conversion):
// every failing field named once, as Elysia's own validation would (400 in the error envelope).
import type { TSchema, Static } from "@sinclair/typebox";
import { AppError, schemaErrors } from "../errors";

export function checkBody<S extends TSchema>(schema: S, body: unknown): Static<S> {
  const errors = schemaErrors(schema, body ?? {});
  if (errors.length)
    throw new AppError("BAD_REQUEST", `invalid input: ${errors.map((e) => e.field).join(", ")}`, errors);
  return body as Static<S>;
}
