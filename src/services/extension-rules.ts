// Validation of the type-specific parts of extensions and hooks that t schemas cannot express alone.
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import { callEventTypes } from "../db/schema";
import { AppError, fieldName, type FieldError } from "../errors";
import { END_CALL_TOOL_NAME, parseToolSchema } from "../models/tool-schema";
import { CallHookParameters, ToolWebhookParameters, type ExtensionInput, type HookInput } from "../models/assistants";


function schemaErrors(schema: TSchema, value: unknown, prefix: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const error of Value.Errors(schema, value)) {
    const field = `${prefix}${error.path ? "." + fieldName(error.path) : ""}`;
    if (!errors.some((e) => e.field === field)) errors.push({ field, message: error.message });
  }
  return errors;
}

/** Checks a tool `schema` string with the parser the call uses. */
export function toolSchemaErrors(json: string, field: string): FieldError[] {
  const parsed = parseToolSchema(json);
  return parsed.ok ? [] : [{ field, message: parsed.message }];
}

export function validateExtensions(extensions: ExtensionInput[]) {
  const errors: FieldError[] = [];
  const toolNames = new Set<string>();
  extensions.forEach((ext, i) => {
    if (ext.type !== "tool_webhook") return;
    const prefix = `extensions[${i}].parameters`;
    const shapeErrors = schemaErrors(ToolWebhookParameters, ext.parameters, prefix);
    errors.push(...shapeErrors);
    if (shapeErrors.length > 0) return;
    errors.push(...toolSchemaErrors(ext.parameters.schema as string, `${prefix}.schema`));
    // the name the LLM sees must be unambiguous, and end_call is the call's own tool
    const name = ext.parameters.name as string;
    if (name === END_CALL_TOOL_NAME) errors.push({ field: `${prefix}.name`, message: `${name} is reserved` });
    else if (toolNames.has(name)) errors.push({ field: `${prefix}.name`, message: `another tool is named ${name}` });
    toolNames.add(name);
  });
  return errors;
}

export function validateHooks(hooks: HookInput[]) {
  const errors: FieldError[] = [];
  hooks.forEach((hook, i) => {
    if (callEventTypes.includes(hook.type as never))
      errors.push(...schemaErrors(CallHookParameters, hook.parameters, `callEventHooks[${i}].parameters`));
  });
  return errors;
}

export function throwIfAny(errors: FieldError[]) {
  if (errors.length) throw new AppError("BAD_REQUEST", `invalid input: ${errors.map((e) => e.field).join(", ")}`, errors);
}
