// Calls a tool_webhook extension's server while the LLM waits for the result.
export type ToolTransport = { type: "sip" | "websocket"; calledNumber?: string; callingNumber?: string };

export type ToolWebhookRequest = {
  serverUrl: string;
  headers?: Record<string, string>;
  name: string;
  callId: string;
  transport: ToolTransport;
  parameters: Record<string, unknown>;
  /** Pass config.bridge.toolTimeoutMs; 10 s when left out. */
  timeoutMs?: number;
};

/** `output` is what the LLM receives; the rest is for logs (never the headers: they may hold secrets). */
export type ToolWebhookResult = { output: string; ok: boolean; status: number | null; durationMs: number; error?: string };

export const toolFailureMessage = "Error: the tool failed to respond. Tell the caller you couldn't complete that.";

export async function callToolWebhook(request: ToolWebhookRequest): Promise<ToolWebhookResult> {
  const { serverUrl, headers = {}, name, callId, transport, parameters, timeoutMs = 10_000 } = request;
  // the body is always JSON, whatever content type the configuration says
  const staticHeaders = Object.entries(headers).filter(([key]) => key.toLowerCase() !== "content-type");
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await fetch(serverUrl, {
      method: "POST",
      headers: [...staticHeaders, ["Content-Type", "application/json"]],
      body: JSON.stringify({ type: "tool_webhook", name, callId, transport, parameters }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "follow",
    });
    const text = await response.text();
    if (!response.ok) return { output: toolFailureMessage, ok: false, status: response.status, durationMs: elapsed() };
    return { output: text, ok: true, status: response.status, durationMs: elapsed() };
  } catch (error) {
    const reason = (error as Error).name === "TimeoutError" ? `timed out after ${timeoutMs} ms` : (error as Error).message;
    return { output: toolFailureMessage, ok: false, status: null, durationMs: elapsed(), error: reason };
  }
}
