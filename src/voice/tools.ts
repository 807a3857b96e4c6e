// Tool definitions the LLM sees: the built-in end_call and the tool_webhook extensions.
import { isObject } from "../lib/is-object";
import { log } from "../log";
import { END_CALL_TOOL_NAME, parseToolSchema } from "../models/tool-schema";
import type { VoiceTool } from "./engine";

export const endCallToolName = END_CALL_TOOL_NAME;

export const endCallTool: VoiceTool = {
  name: endCallToolName,
  description:
    "End the phone call. Use it after saying goodbye, when the caller asks to hang up or the conversation is over.",
  parameters: {
    type: "object",
    properties: { reason: { type: "string", description: "Why the call is ending, in a few words." } },
    required: [],
  },
};

/** A tool call's JSON arguments as an object; anything else (broken JSON, an array) counts as none. */
export function parseToolArguments(raw: string, toolName: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw || "{}");
    if (isObject(parsed)) return parsed;
  } catch {
    log.warn("tool call arguments are not JSON; passing none", { tool: toolName });
  }
  return {};
}

export type ToolWebhook = { tool: VoiceTool; serverUrl: string; headers: Record<string, string> };

type Extension = { type: string; parameters: Record<string, unknown> };

/** One stored tool_webhook extension as the LLM's tool, or why it cannot be used. */
function readToolWebhook(p: Record<string, unknown>): ToolWebhook | string {
  const { name, serverUrl, schema } = p;
  if (typeof name !== "string" || typeof serverUrl !== "string" || typeof schema !== "string")
    return "name, serverUrl and schema are required";
  if (name === endCallToolName) return `${endCallToolName} is reserved`;
  const parsed = parseToolSchema(schema);
  if (!parsed.ok) return `schema ${parsed.message}`;
  const headers = isObject(p.headers) ? (p.headers as Record<string, string>) : {};
  // the extension's name is the one the LLM sees
  return { tool: { ...parsed.tool, name }, serverUrl, headers };
}

/**
 * The usable tool_webhook extensions, read with the parser the API validates with. A broken one is skipped
 * (and logged) rather than failing the call.
 */
export function toolWebhooksFromExtensions(extensions: Extension[]): ToolWebhook[] {
  const webhooks: ToolWebhook[] = [];
  for (const { type, parameters } of extensions) {
    if (type !== "tool_webhook") continue;
    const webhook = readToolWebhook(parameters);
    if (typeof webhook === "string") log.warn("tool webhook skipped", { tool: parameters.name, error: webhook });
    else webhooks.push(webhook);
  }
  return webhooks;
}
