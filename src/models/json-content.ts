// A string field that holds JSON (a tool's function in OpenAI format, an analysis' JSON Schema) is
// documented with its content's own schema, JSON Schema's contentMediaType and contentSchema, so that a
// client (the console's forms) can edit the content as fields instead of as an escaped string.
// Validation never reads these keywords: the services parse the string themselves.
import { t, type TSchema } from "elysia";
import { Enum } from "./common";

export const jsonContent = (content: TSchema) => ({ contentMediaType: "application/json", contentSchema: content });

/** A JSON Schema of an object: its fields by name, each with a type and a description, and which are required. */
export const ObjectJsonSchema = (types: readonly [string, ...string[]], field: string) =>
  t.Object({
    type: t.Literal("object"),
    properties: t.Record(
      t.String(),
      t.Object({ type: Enum(types), description: t.Optional(t.String({ description: `what the ${field} means` })) }),
    ),
    required: t.Optional(t.Array(t.String(), { description: `names of the ${field}s that must be given` })),
  });
