// Calls a tool_webhook extension's server while the LLM waits for the result, through the outbound guard.
import { guardedExchange } from "../net/guarded-request";
import { headersRefusal } from "../net/outbound-headers";
import type { OutboundGuard } from "../net/outbound-guard";

export type ToolTransport = { type: "sip" | "websocket"; calledNumber?: string; callingNumber?: string };

export type ToolWebhookRequest = {
  serverUrl: string;
  headers?: Record<string, string>;
  name: string;
  callId: string;
  transport: ToolTransport;
  parameters: Record<string, unknown>;
  guard: OutboundGuard;
  /** Pass config.bridge.toolTimeoutMs; 10 s when left out. */
  timeoutMs?: number;
};

/** `output` is what the LLM receives; the rest is for logs (never the headers: they may hold secrets). */
export type ToolWebhookResult = {
  output: string;
  ok: boolean;
  status: number | null;
  durationMs: number;
  error?: string;
};

export const toolFailureMessage = "Error: the tool failed to respond. Tell the caller you couldn't complete that.";

// what the LLM can use of a tool's answer; a larger one is a failed call, not a memory sink
const MAX_OUTPUT_BYTES = 256 * 1024;

export async function callToolWebhook(request: ToolWebhookRequest): Promise<ToolWebhookResult> {
  const { serverUrl, headers = {}, name, callId, transport, parameters, guard, timeoutMs = 10_000 } = request;
  const answer = await postToolJson({
    url: serverUrl,
    headers,
    body: { type: "tool_webhook", name, callId, transport, parameters },
    guard,
    timeoutMs,
  });
  if (!answer.ok) return answer;
  return { output: answer.body, ok: true, status: answer.status, durationMs: answer.durationMs };
}

export type ToolPost = {
  url: string;
  /** static headers; a content-type among them is replaced: the body is always JSON */
  headers: Record<string, string>;
  body: unknown;
  guard: OutboundGuard;
  timeoutMs: number;
  maxResponseBytes?: number;
};

/** A 2xx answer's text and content type, or the failure the LLM gets (the reason only in `error`, for the log). */
export type ToolAnswer =
  | { ok: true; body: string; status: number; durationMs: number }
  | (ToolWebhookResult & { ok: false });

/** POSTs JSON to a tenant's tool server through the outbound guard: what tool webhooks and knowledge_base url tools share. */
export async function postToolJson(post: ToolPost): Promise<ToolAnswer> {
  const { url, headers, body: payload, guard, timeoutMs, maxResponseBytes = MAX_OUTPUT_BYTES } = post;
  const staticHeaders = Object.fromEntries(
    Object.entries(headers).filter(([key]) => key.toLowerCase() !== "content-type"),
  );
  const badHeaders = headersRefusal(staticHeaders);
  if (badHeaders) return { output: toolFailureMessage, ok: false, status: null, durationMs: 0, error: badHeaders };
  const body = Buffer.from(JSON.stringify(payload));
  const res = await guardedExchange(guard, {
    url,
    method: "POST",
    headers: { ...staticHeaders, "content-type": "application/json", "content-length": String(body.length) },
    body,
    timeoutMs,
    maxResponseBytes,
  });
  const { statusCode: status, durationMs } = res;
  const failed = (error?: string): ToolAnswer => ({
    output: toolFailureMessage,
    ok: false,
    status,
    durationMs,
    ...(error ? { error } : {}),
  });
  // the LLM only ever sees the generic failure; the reason goes to the log through `error`
  if (res.timedOut) return failed(`timed out after ${timeoutMs} ms`);
  if (res.error !== null) return failed(res.error);
  if (status === null || status < 200 || status >= 300) {
    return failed(
      status !== null && status >= 300 && status < 400 ? `redirect not followed (status ${status})` : undefined,
    );
  }
  if (res.truncated) return failed(`response larger than ${maxResponseBytes} bytes`);
  if (!res.complete) return failed(`response body not complete within ${timeoutMs} ms`);
  return { ok: true, body: res.body.toString("utf8"), status, durationMs };
}
