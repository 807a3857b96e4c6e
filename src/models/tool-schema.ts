// The one reader of a tool_webhook `schema` string (the spec's OpenAI function format), shared by the API,
// which refuses a bad one with a 400, and the call, which turns a stored one into the tool the LLM sees.
import { t } from "elysia";
import { isObject } from "../lib/is-object";
import { ObjectJsonSchema } from "./json-content";

export const TOOL_ARGUMENT_TYPES = ["string", "integer", "number", "boolean", "object", "array"] as const;

/** What parseToolSchema accepts, for the document (the extension's own name is the one the LLM sees). */
export const ToolSpecSchema = t.Object({
  name: t.String({ minLength: 1, description: "required by the format; the LLM sees the extension's parameters.name" }),
  description: t.Optional(t.String({ description: "what the tool does, for the LLM" })),
  parameters: ObjectJsonSchema(TOOL_ARGUMENT_TYPES, "argument"),
});

/** A function the LLM may call, in OpenAI function format (JSON Schema parameters). */
export type ToolSpec = { name: string; description?: string; parameters: Record<string, unknown> };

export type ToolSchemaResult = { ok: true; tool: ToolSpec } | { ok: false; message: string };

const refuse = (message: string): ToolSchemaResult => ({ ok: false, message });

export function parseToolSchema(json: string): ToolSchemaResult {
  let spec: unknown;
  try {
    spec = JSON.parse(json);
  } catch {
    return refuse("is not valid JSON");
  }
  if (!isObject(spec)) return refuse("must be a JSON object with name, description and parameters");
  if (typeof spec.name !== "string" || !spec.name) return refuse("name must be a non-empty string");
  if (spec.description !== undefined && typeof spec.description !== "string")
    return refuse("description must be a string");
  const params = spec.parameters;
  if (!isObject(params) || params.type !== "object") return refuse('parameters must be an object with type "object"');
  const properties = params.properties ?? {};
  if (!isObject(properties)) return refuse("parameters.properties must be an object");
  for (const [arg, def] of Object.entries(properties)) {
    if (!isObject(def) || !TOOL_ARGUMENT_TYPES.includes(def.type as never))
      return refuse(`argument "${arg}" must have a type among ${TOOL_ARGUMENT_TYPES.join(", ")}`);
    if (def.description !== undefined && typeof def.description !== "string")
      return refuse(`argument "${arg}" description must be a string`);
  }
  const required = params.required ?? [];
  if (!Array.isArray(required) || required.some((r) => typeof r !== "string" || !(r in properties)))
    return refuse("parameters.required must list argument names from parameters.properties");
  const tool: ToolSpec = { name: spec.name, parameters: params };
  if (typeof spec.description === "string") tool.description = spec.description;
  return { ok: true, tool };
}

/** The call's built-in tool; no tool_webhook may take its name. */
export const END_CALL_TOOL_NAME = "end_call";
