// Validation of the type-specific parts of extensions and hooks that t schemas cannot express alone.
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import { AppError, fieldName, type FieldError } from "../errors";
import { CallHookParameters, ToolWebhookParameters, type ExtensionInput, type HookInput } from "../api/models/assistants";

export const TOOL_ARGUMENT_TYPES = ["string", "integer", "number", "boolean", "object", "array"] as const;
export const CALL_HOOK_TYPES = ["call_started", "call_concluded"] as const;

function schemaErrors(schema: TSchema, value: unknown, prefix: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const error of Value.Errors(schema, value)) {
    const field = `${prefix}${error.path ? "." + fieldName(error.path) : ""}`;
    if (!errors.some((e) => e.field === field)) errors.push({ field, message: error.message });
  }
  return errors;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks a tool `schema` string: OpenAI function format, argument types among the six supported. */
export function toolSchemaErrors(json: string, field: string): FieldError[] {
  let spec: unknown;
  try {
    spec = JSON.parse(json);
  } catch {
    return [{ field, message: "is not valid JSON" }];
  }
  const fail = (message: string) => [{ field, message }];
  if (!isObject(spec)) return fail("must be a JSON object with name, description and parameters");
  if (typeof spec.name !== "string" || !spec.name) return fail("name must be a non-empty string");
  if (spec.description !== undefined && typeof spec.description !== "string") return fail("description must be a string");
  const params = spec.parameters;
  if (!isObject(params) || params.type !== "object") return fail('parameters must be an object with type "object"');
  const properties = params.properties ?? {};
  if (!isObject(properties)) return fail("parameters.properties must be an object");
  for (const [arg, def] of Object.entries(properties)) {
    if (!isObject(def) || !TOOL_ARGUMENT_TYPES.includes(def.type as never))
      return fail(`argument "${arg}" must have a type among ${TOOL_ARGUMENT_TYPES.join(", ")}`);
    if (def.description !== undefined && typeof def.description !== "string")
      return fail(`argument "${arg}" description must be a string`);
  }
  const required = params.required ?? [];
  if (!Array.isArray(required) || required.some((r) => typeof r !== "string" || !(r in properties)))
    return fail("parameters.required must list argument names from parameters.properties");
  return [];
}

export function validateExtensions(extensions: ExtensionInput[]) {
  const errors: FieldError[] = [];
  extensions.forEach((ext, i) => {
    if (ext.type !== "tool_webhook") return;
    const prefix = `extensions[${i}].parameters`;
    const shapeErrors = schemaErrors(ToolWebhookParameters, ext.parameters, prefix);
    errors.push(...shapeErrors);
    if (shapeErrors.length === 0) errors.push(...toolSchemaErrors(ext.parameters.schema as string, `${prefix}.schema`));
  });
  return errors;
}

export function validateHooks(hooks: HookInput[]) {
  const errors: FieldError[] = [];
  hooks.forEach((hook, i) => {
    if (CALL_HOOK_TYPES.includes(hook.type as never))
      errors.push(...schemaErrors(CallHookParameters, hook.parameters, `callEventHooks[${i}].parameters`));
  });
  return errors;
}

export function throwIfAny(errors: FieldError[]) {
  if (errors.length) throw new AppError("BAD_REQUEST", `invalid input: ${errors.map((e) => e.field).join(", ")}`, errors);
}
