// Answers one tool call of the LLM through its tool_webhook, with a log line for each side.
import type { Transport } from "../db/schema";
import { log } from "../log";
import type { OutboundGuard } from "../net/outbound-guard";
import { recordToolWebhook, recordUnknownTool } from "../metrics/metrics";
import type { ToolCallEvent } from "../voice/engine";
import {
  isHandoffTool,
  isKnowledgeTool,
  isTransferTool,
  type CallTool,
  type KnowledgeTool,
  type ToolWebhook,
} from "../voice/tools";
import { runKnowledgeTool, type KnowledgeSearch } from "./knowledge-tool";
import { callToolWebhook, toolFailureMessage, type ToolWebhookResult } from "./tool-webhook";

export type ToolCallRequest = {
  callId: string;
  event: ToolCallEvent;
  tools: CallTool[];
  timeoutMs: number;
  /** KNOWLEDGE_TIMEOUT_MS: knowledge_base tools' own time-out */
  knowledgeTimeoutMs: number;
  /** our knowledge bases' search, for knowledge_base tools with a knowledgeBaseId */
  knowledgeSearch: KnowledgeSearch;
  transport: Transport;
  guard: OutboundGuard;
  /** aborted when the call ends (a test call's mock stops waiting out its delay) */
  callEnded?: AbortSignal;
};

/** What the LLM gets back and how long the tool took (the call's tool_result message carries it). */
export type ToolCallOutcome = { output: string; durationMs: number };

/** Never throws: failures become the generic error string. */
export async function runToolCall({
  callId,
  event,
  tools,
  timeoutMs,
  knowledgeTimeoutMs,
  knowledgeSearch,
  transport,
  guard,
}: ToolCallRequest): Promise<ToolCallOutcome> {
  const fields = { callId, tool: event.name, toolCallId: event.callId };
  log.info("call", { ...fields, event: "tool_call" });
  // transfer_call and handoff tools are the session's own (calls/transfer-call.ts, calls/handoff.ts)
  const webhook = tools.find(
    (w): w is ToolWebhook | KnowledgeTool => w.tool.name === event.name && !isTransferTool(w) && !isHandoffTool(w),
  );
  if (!webhook) {
    log.warn("call", {
      ...fields,
      event: "tool_result",
      ok: false,
      error: "the LLM called a tool that is not configured",
    });
    recordUnknownTool();
    return { output: toolFailureMessage, durationMs: 0 };
  }
  // the headers and an authToken stay out of the log: they carry the tool server's credentials
  let result: ToolWebhookResult;
  if (isKnowledgeTool(webhook)) {
    const query = typeof event.arguments.query === "string" ? event.arguments.query : "";
    result = await runKnowledgeTool({
      tool: webhook,
      query,
      callId,
      guard,
      timeoutMs: knowledgeTimeoutMs,
      search: knowledgeSearch,
    });
  } else {
    result = await callToolWebhook({
      serverUrl: webhook.serverUrl,
      headers: webhook.headers,
      name: event.name,
      callId,
      transport,
      parameters: event.arguments,
      timeoutMs,
      guard,
    });
  }
  recordToolWebhook(result);
  log.info("call", {
    ...fields,
    event: "tool_result",
    ok: result.ok,
    status: result.status,
    durationMs: result.durationMs,
    error: result.error,
  });
  return { output: result.output, durationMs: result.durationMs };
}
