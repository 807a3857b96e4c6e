// Answers one tool call of the LLM through its tool_webhook, with a log line for each side.
import type { Transport } from "../db/schema";
import { log } from "../log";
import type { OutboundGuard } from "../net/outbound-guard";
import { recordToolWebhook, recordUnknownTool } from "../metrics/metrics";
import type { ToolCallEvent } from "../voice/engine";
import type { ToolWebhook } from "../voice/tools";
import { callToolWebhook, toolFailureMessage } from "./tool-webhook";

export type ToolCallRequest = {
  callId: string;
  event: ToolCallEvent;
  tools: ToolWebhook[];
  timeoutMs: number;
  transport: Transport;
  guard: OutboundGuard;
};

/** The text the LLM gets back; never throws (failures become the generic error string). */
export async function runToolCall({
  callId,
  event,
  tools,
  timeoutMs,
  transport,
  guard,
}: ToolCallRequest): Promise<string> {
  const fields = { callId, tool: event.name, toolCallId: event.callId };
  log.info("call", { ...fields, event: "tool_call" });
  const webhook = tools.find((w) => w.tool.name === event.name);
  if (!webhook) {
    log.warn("call", {
      ...fields,
      event: "tool_result",
      ok: false,
      error: "the LLM called a tool that is not configured",
    });
    recordUnknownTool();
    return toolFailureMessage;
  }
  // the headers stay out of the log: they often carry the tool server's credentials
  const { serverUrl, headers } = webhook;
  const result = await callToolWebhook({
    serverUrl,
    headers,
    name: event.name,
    callId,
    transport,
    parameters: event.arguments,
    timeoutMs,
    guard,
  });
  recordToolWebhook(result);
  log.info("call", {
    ...fields,
    event: "tool_result",
    ok: result.ok,
    status: result.status,
    durationMs: result.durationMs,
    error: result.error,
  });
  return result.output;
}
