// Tool definitions the LLM sees: the built-in end_call and the extensions' tools.
import { isObject } from "../lib/is-object";
import { log } from "../log";
import { END_CALL_TOOL_NAME, parseToolSchema } from "../models/tool-schema";
import {
  DEFAULT_HANDOFF_CONTEXT,
  DEFAULT_HANDOFF_MAX_MESSAGES,
  HANDOFF,
  HANDOFF_TOOL_NAME,
  handoffContexts,
  type HandoffContext,
} from "../models/handoff";
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

/** A knowledge_base extension: the customer's search service (`url`) or one of our knowledge bases. */
export type KnowledgeTool = {
  tool: VoiceTool;
  maxResults: number;
  knowledge: { url: string; authToken: string | null } | { knowledgeBaseId: string };
};

/** One place a transfer_call extension may hand the caller to; `message` is a template. */
export type TransferDestination = { to: string; description: string; message: string };

/** A transfer_call extension (docs/transfer.md): the LLM picks a destination by its `to`. */
export type TransferTool = {
  tool: VoiceTool;
  transfer: {
    destinations: TransferDestination[];
    mode: "blind" | "warm";
    method: "refer" | "dial";
    ringTimeoutMs: number;
    onFailure: "return" | "hangup";
  };
};

/** Every tool an extension gives the LLM. */
export type CallTool = ToolWebhook | KnowledgeTool | TransferTool | HandoffTool;
export const isKnowledgeTool = (tool: CallTool): tool is KnowledgeTool => "knowledge" in tool;
export const isTransferTool = (tool: CallTool): tool is TransferTool => "transfer" in tool;
export const isHandoffTool = (tool: CallTool): tool is HandoffTool => "handoff" in tool;

export const KNOWLEDGE_TOOL_NAME = "search_knowledge_base";
const DEFAULT_MAX_RESULTS = 3;

type Extension = { type: string; parameters: Record<string, unknown>; secretEncrypted?: string | null };

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

/** One stored knowledge_base extension as the LLM's tool; `openSecret` decrypts its authToken. */
function readKnowledgeTool(ext: Extension, openSecret: (sealed: string) => string): KnowledgeTool | string {
  const p = ext.parameters;
  const name = typeof p.name === "string" ? p.name : KNOWLEDGE_TOOL_NAME;
  const maxResults = typeof p.maxResults === "number" ? p.maxResults : DEFAULT_MAX_RESULTS;
  const description =
    typeof p.description === "string" && p.description
      ? p.description
      : "Search the knowledge base for facts that answer the caller's question. Use it before answering questions you have no facts for.";
  const tool: VoiceTool = {
    name,
    description,
    parameters: {
      type: "object",
      properties: { query: { type: "string", description: "What to look up, as a short question or keywords." } },
      required: ["query"],
    },
  };
  if (typeof p.url === "string")
    return {
      tool,
      maxResults,
      knowledge: { url: p.url, authToken: ext.secretEncrypted ? openSecret(ext.secretEncrypted) : null },
    };
  if (typeof p.knowledgeBaseId === "string")
    return { tool, maxResults, knowledge: { knowledgeBaseId: p.knowledgeBaseId } };
  return "url or knowledgeBaseId is required";
}

/** The knowledge_base extensions as tools; a broken one is skipped and logged (never its token). */
export function knowledgeToolsFromExtensions(
  extensions: Extension[],
  openSecret: (sealed: string) => string,
): KnowledgeTool[] {
  const tools: KnowledgeTool[] = [];
  for (const ext of extensions) {
    if (ext.type !== "knowledge_base") continue;
    let tool: KnowledgeTool | string;
    try {
      tool = readKnowledgeTool(ext, openSecret);
    } catch (error) {
      tool = `its authToken cannot be read: ${(error as Error).message}`;
    }
    if (typeof tool === "string") log.warn("knowledge tool skipped", { tool: ext.parameters.name, error: tool });
    else tools.push(tool);
  }
  return tools;
}

/**
 * The one tool of a transfer_call or handoff extension: a required `destination` argument whose enum is the
 * destinations' values, each described in the argument's description. The extension's `name` and
 * `description` replace the defaults.
 */
function destinationTool(
  p: Record<string, unknown>,
  defaultName: string,
  defaultDescription: string,
  argumentIntro: string,
  destinations: { value: string; description: string }[],
): VoiceTool {
  const listed = destinations.map((d) => `${d.value}: ${d.description}`).join("; ");
  return {
    name: typeof p.name === "string" ? p.name : defaultName,
    description: typeof p.description === "string" && p.description ? p.description : defaultDescription,
    parameters: {
      type: "object",
      properties: {
        destination: {
          type: "string",
          enum: destinations.map((d) => d.value),
          description: `${argumentIntro} ${listed}`,
        },
      },
      required: ["destination"],
    },
  };
}

export const TRANSFER_TOOL_NAME = "transfer_call";
const DEFAULT_TRANSFER_MESSAGE = "Transferring your call now.";

/** One stored transfer_call extension as the LLM's tool: one `destination` argument, an enum of the `to`s. */
function readTransferTool(p: Record<string, unknown>): TransferTool | string {
  if (!Array.isArray(p.destinations) || p.destinations.length === 0) return "destinations are required";
  const destinations: TransferDestination[] = [];
  for (const d of p.destinations) {
    if (!isObject(d) || typeof d.to !== "string") return "a destination has no to";
    const description = typeof d.description === "string" ? d.description : "";
    destinations.push({
      to: d.to,
      description,
      message: typeof d.message === "string" ? d.message : DEFAULT_TRANSFER_MESSAGE,
    });
  }
  return {
    tool: destinationTool(
      p,
      TRANSFER_TOOL_NAME,
      "Transfer the caller to a human. Use it when the caller asks for a person or you cannot help further.",
      "Where to transfer the caller.",
      destinations.map((d) => ({ value: d.to, description: d.description })),
    ),
    transfer: {
      destinations,
      mode: p.mode === "warm" ? "warm" : "blind",
      method: p.method === "dial" ? "dial" : "refer",
      ringTimeoutMs: (typeof p.ringTimeoutSeconds === "number" ? p.ringTimeoutSeconds : 30) * 1000,
      onFailure: p.onFailure === "hangup" ? "hangup" : "return",
    },
  };
}

/** The transfer_call extensions as tools; a broken one is skipped and logged. */
export function transferToolsFromExtensions(extensions: Extension[]): TransferTool[] {
  const tools: TransferTool[] = [];
  for (const { type, parameters } of extensions) {
    if (type !== "transfer_call") continue;
    const tool = readTransferTool(parameters);
    if (typeof tool === "string") log.warn("transfer tool skipped", { tool: parameters.name, error: tool });
    else tools.push(tool);
  }
  return tools;
}

/** One assistant a handoff extension may hand the caller to; `name` is what the LLM chooses, `message` a template. */
export type HandoffDestination = { assistantId: string; name: string; description: string; message: string | null };

/** A handoff extension (docs/handoff.md): the LLM picks a destination assistant by its name. */
export type HandoffTool = {
  tool: VoiceTool;
  handoff: { destinations: HandoffDestination[]; context: HandoffContext; maxMessages: number };
};

/**
 * One stored handoff extension as the LLM's tool. `assistantNames` are the organization's assistants by id:
 * a destination without a name of its own goes by its assistant's; one whose assistant is gone is left out.
 */
function readHandoffTool(
  p: Record<string, unknown>,
  assistantNames: ReadonlyMap<string, string>,
): HandoffTool | string {
  if (!Array.isArray(p.destinations)) return "destinations are required";
  const destinations: HandoffDestination[] = [];
  for (const d of p.destinations) {
    if (!isObject(d) || typeof d.assistantId !== "string") return "a destination has no assistantId";
    const assistantName = assistantNames.get(d.assistantId);
    if (assistantName === undefined) continue;
    const name = typeof d.name === "string" ? d.name : assistantName;
    // a renamed assistant may now share a name: the LLM could not tell the two apart
    if (destinations.some((other) => other.name === name)) return `two destinations are named ${name}`;
    destinations.push({
      assistantId: d.assistantId,
      name,
      description: typeof d.description === "string" ? d.description : "",
      message: typeof d.message === "string" ? d.message : null,
    });
  }
  if (destinations.length === 0) return "no destination assistant exists";
  const context = handoffContexts.includes(p.context as never)
    ? (p.context as HandoffContext)
    : DEFAULT_HANDOFF_CONTEXT;
  return {
    tool: destinationTool(
      p,
      HANDOFF_TOOL_NAME,
      "Hand the caller to another assistant who can help with what they need. The conversation goes on with that assistant.",
      "The assistant to hand the caller to.",
      destinations.map((d) => ({ value: d.name, description: d.description })),
    ),
    handoff: {
      destinations,
      context,
      maxMessages: typeof p.maxMessages === "number" ? p.maxMessages : DEFAULT_HANDOFF_MAX_MESSAGES,
    },
  };
}

/** The handoff extensions as tools; a broken one is skipped and logged. */
export function handoffToolsFromExtensions(
  extensions: Extension[],
  assistantNames: ReadonlyMap<string, string>,
): HandoffTool[] {
  const tools: HandoffTool[] = [];
  for (const { type, parameters } of extensions) {
    if (type !== HANDOFF) continue;
    const tool = readHandoffTool(parameters, assistantNames);
    if (typeof tool === "string") log.warn("handoff tool skipped", { tool: parameters.name, error: tool });
    else tools.push(tool);
  }
  return tools;
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
