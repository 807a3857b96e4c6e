// Validation of the type-specific parts of extensions and hooks that t schemas cannot express alone.
import { callEventTypes } from "../db/schema";
import { AppError, schemaErrors, type FieldError } from "../errors";
import { headerProblems } from "../net/outbound-headers";
import type { OutboundGuard } from "../net/outbound-guard";
import { freeFormErrors } from "./free-form-limits";
import { checkDestination } from "./outbound-calls";
import { END_CALL_TOOL_NAME, parseToolSchema } from "../models/tool-schema";
import { compileAnalysisSchema } from "../models/analysis-schema";
import {
  endpointingRefusal,
  TURN_TAKING,
  TurnTakingParameters,
  type EndpointingMode,
  type StrategyShape,
} from "../models/turn-taking";
import { HANDOFF, HANDOFF_TOOL_NAME, HandoffParameters } from "../models/handoff";
import {
  CallAnalysisParameters,
  CallContextParameters,
  CallHookParameters,
  KnowledgeBaseParameters,
  ToolWebhookParameters,
  TransferCallParameters,
  type ExtensionInput,
  type HookInput,
} from "../models/assistants";

const KNOWLEDGE_TOOL_NAME = "search_knowledge_base";
const TRANSFER_TOOL_NAME = "transfer_call";

/** Checks a tool `schema` string with the parser the call uses. */
export function toolSchemaErrors(json: string, field: string): FieldError[] {
  const parsed = parseToolSchema(json);
  return parsed.ok ? [] : [{ field, message: parsed.message }];
}

/** A URL the outbound guard refuses to reach, and headers we would not send, named by field. */
function destinationErrors(
  guard: OutboundGuard,
  url: string,
  urlField: string,
  headers: unknown,
  prefix: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const refusal = guard.configuredUrlRefusal(url);
  if (refusal) errors.push({ field: urlField, message: `not an allowed destination: ${refusal}` });
  for (const { name, message } of headerProblems((headers ?? {}) as Record<string, string>))
    errors.push({ field: name ? `${prefix}.headers.${name}` : `${prefix}.headers`, message });
  return errors;
}

export function validateExtensions(extensions: ExtensionInput[], guard: OutboundGuard) {
  const errors: FieldError[] = [];
  const toolNames = new Set<string>();
  // the name the LLM sees must be unambiguous, and end_call is the call's own tool
  const checkName = (name: string, field: string) => {
    if (name === END_CALL_TOOL_NAME) errors.push({ field, message: `${name} is reserved` });
    else if (toolNames.has(name)) errors.push({ field, message: `another tool is named ${name}` });
    toolNames.add(name);
  };
  let turnTaking = false;
  extensions.forEach((ext, i) => {
    const prefix = `extensions[${i}].parameters`;
    const limitErrors = freeFormErrors(ext.parameters, prefix);
    errors.push(...limitErrors);
    if (limitErrors.length > 0) return;
    if (ext.type === TURN_TAKING) {
      if (turnTaking) errors.push({ field: `extensions[${i}].type`, message: "at most one turn_taking extension" });
      turnTaking = true;
      errors.push(...schemaErrors(TurnTakingParameters, ext.parameters, prefix));
      return;
    }
    if (ext.type === HANDOFF) {
      // which assistants the destinations name is checked against the database (handoff-destinations.ts)
      const shapeErrors = schemaErrors(HandoffParameters, ext.parameters, prefix);
      errors.push(...shapeErrors);
      if (shapeErrors.length === 0)
        checkName((ext.parameters.name as string | undefined) ?? HANDOFF_TOOL_NAME, `${prefix}.name`);
      return;
    }
    if (ext.type === "knowledge_base") {
      const knowledgeErrors = knowledgeBaseErrors(ext.parameters, prefix, guard);
      errors.push(...knowledgeErrors);
      if (knowledgeErrors.length === 0)
        checkName((ext.parameters.name as string | undefined) ?? KNOWLEDGE_TOOL_NAME, `${prefix}.name`);
      return;
    }
    if (ext.type === "transfer_call") {
      const transferErrors = transferCallErrors(ext.parameters, prefix, guard);
      errors.push(...transferErrors);
      if (transferErrors.length === 0)
        checkName((ext.parameters.name as string | undefined) ?? TRANSFER_TOOL_NAME, `${prefix}.name`);
      return;
    }
    if (ext.type === "call_context" || ext.type === "call_analysis") {
      errors.push(...callExtensionErrors(ext.type, ext.parameters, prefix, guard));
      return;
    }
    if (ext.type !== "tool_webhook") return;
    const shapeErrors = schemaErrors(ToolWebhookParameters, ext.parameters, prefix);
    errors.push(...shapeErrors);
    if (shapeErrors.length > 0) return;
    errors.push(
      ...destinationErrors(
        guard,
        ext.parameters.serverUrl as string,
        `${prefix}.serverUrl`,
        ext.parameters.headers,
        prefix,
      ),
    );
    errors.push(...toolSchemaErrors(ext.parameters.schema as string, `${prefix}.schema`));
    checkName(ext.parameters.name as string, `${prefix}.name`);
  });
  return errors;
}

/**
 * A turn_taking endpointing mode the assistant's strategy cannot run, named by field (the shapes are
 * checked already). A strategy changed later is not refused: its calls fall back to silence.
 */
export function turnTakingStrategyErrors(extensions: ExtensionInput[], strategy: StrategyShape): FieldError[] {
  const i = extensions.findIndex((e) => e.type === TURN_TAKING);
  const mode = (extensions[i]?.parameters.endpointing as { mode?: EndpointingMode } | undefined)?.mode;
  const refusal = mode && endpointingRefusal(mode, strategy);
  return refusal ? [{ field: `extensions[${i}].parameters.endpointing.mode`, message: refusal }] : [];
}

/** A knowledge_base extension: its shape, exactly one of url / knowledgeBaseId, a url the guard reaches. */
function knowledgeBaseErrors(p: Record<string, unknown>, prefix: string, guard: OutboundGuard): FieldError[] {
  const shapeErrors = schemaErrors(KnowledgeBaseParameters, p, prefix);
  if (shapeErrors.length > 0) return shapeErrors;
  const hasUrl = p.url !== undefined;
  if (hasUrl === (p.knowledgeBaseId !== undefined))
    return [{ field: `${prefix}.url`, message: "give exactly one of url and knowledgeBaseId" }];
  if (!hasUrl && p.authToken !== undefined && p.authToken !== null)
    return [{ field: `${prefix}.authToken`, message: "only with url" }];
  return hasUrl ? destinationErrors(guard, p.url as string, `${prefix}.url`, undefined, prefix) : [];
}

/** A transfer_call extension: its shape, and each destination a number or a sip: URI the guard reaches, once. */
function transferCallErrors(p: Record<string, unknown>, prefix: string, guard: OutboundGuard): FieldError[] {
  const shapeErrors = schemaErrors(TransferCallParameters, p, prefix);
  if (shapeErrors.length > 0) return shapeErrors;
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  (p.destinations as { to: string }[]).forEach(({ to }, i) => {
    const field = `${prefix}.destinations[${i}].to`;
    // the LLM picks a destination by its `to`: two alike would be one enum value
    if (seen.has(to)) {
      errors.push({ field, message: "another destination has this to" });
      return;
    }
    seen.add(to);
    try {
      checkDestination(guard, to, field);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      errors.push(...(error.errors ?? []));
    }
  });
  return errors;
}

/** call_context: its shape and a destination the guard reaches; call_analysis: its shape and a schema Ajv compiles. */
function callExtensionErrors(
  type: "call_context" | "call_analysis",
  p: Record<string, unknown>,
  prefix: string,
  guard: OutboundGuard,
): FieldError[] {
  if (type === "call_context") {
    const shapeErrors = schemaErrors(CallContextParameters, p, prefix);
    if (shapeErrors.length > 0) return shapeErrors;
    return destinationErrors(guard, p.url as string, `${prefix}.url`, p.headers, prefix);
  }
  const shapeErrors = schemaErrors(CallAnalysisParameters, p, prefix);
  if (shapeErrors.length > 0) return shapeErrors;
  const compiled = compileAnalysisSchema(p.schema as string);
  return compiled.ok ? [] : [{ field: `${prefix}.schema`, message: compiled.message }];
}

export function validateHooks(hooks: HookInput[], guard: OutboundGuard) {
  const errors: FieldError[] = [];
  hooks.forEach((hook, i) => {
    const prefix = `callEventHooks[${i}].parameters`;
    const limitErrors = freeFormErrors(hook.parameters, prefix);
    errors.push(...limitErrors);
    if (!callEventTypes.includes(hook.type as never) || limitErrors.length > 0) return;
    const shapeErrors = schemaErrors(CallHookParameters, hook.parameters, prefix);
    errors.push(...shapeErrors);
    if (shapeErrors.length === 0)
      errors.push(
        ...destinationErrors(guard, hook.parameters.url as string, `${prefix}.url`, hook.parameters.headers, prefix),
      );
  });
  return errors;
}

export function throwIfAny(errors: FieldError[]) {
  if (errors.length)
    throw new AppError("BAD_REQUEST", `invalid input: ${errors.map((e) => e.field).join(", ")}`, errors);
}
