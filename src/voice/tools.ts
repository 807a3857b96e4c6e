// Tool definitions the LLM sees: the built-in end_call and the tool_webhook extensions.
import { log } from "../log";
import type { VoiceTool } from "./engine";

export const endCallToolName = "end_call";

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

export class InvalidToolSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidToolSchemaError";
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Parses a tool `schema` JSON string (OpenAI function format; the chat-completions wrapper
 * `{type: "function", function: {...}}` is accepted too). `name` overrides the schema's name,
 * since the extension's name is the one the LLM sees.
 */
export function parseToolSchema(schema: string, name?: string): VoiceTool {
  let parsed: unknown;
  try {
    parsed = JSON.parse(schema);
  } catch {
    throw new InvalidToolSchemaError("tool schema is not valid JSON");
  }
  const fn = isObject(parsed) && isObject(parsed.function) ? parsed.function : parsed;
  if (!isObject(fn)) throw new InvalidToolSchemaError("tool schema must be a JSON object");
  const toolName = name ?? fn.name;
  if (typeof toolName !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(toolName)) {
    throw new InvalidToolSchemaError(`invalid tool name ${JSON.stringify(toolName)}`);
  }
  const parameters = isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} };
  return typeof fn.description === "string"
    ? { name: toolName, description: fn.description, parameters }
    : { name: toolName, parameters };
}

export type ToolWebhook = { tool: VoiceTool; serverUrl: string; headers: Record<string, string> };

type Extension = { type: string; parameters: Record<string, unknown> };

/** The usable tool_webhook extensions; a broken one is skipped (and logged) rather than failing the call. */
export function toolWebhooksFromExtensions(extensions: Extension[]): ToolWebhook[] {
  const webhooks: ToolWebhook[] = [];
  for (const { type, parameters: p } of extensions) {
    if (type !== "tool_webhook") continue;
    try {
      if (typeof p.serverUrl !== "string" || typeof p.schema !== "string") {
        throw new InvalidToolSchemaError("serverUrl and schema are required");
      }
      const tool = parseToolSchema(p.schema, typeof p.name === "string" ? p.name : undefined);
      if (tool.name === endCallToolName) throw new InvalidToolSchemaError(`${endCallToolName} is reserved`);
      const headers = isObject(p.headers) ? (p.headers as Record<string, string>) : {};
      webhooks.push({ tool, serverUrl: p.serverUrl, headers });
    } catch (error) {
      log.warn("tool webhook skipped", { tool: p.name, error: (error as Error).message });
    }
  }
  return webhooks;
}
