// OpenAI-compatible chat completions with `stream: true`: server-sent chunks turned into text fragments
// as they come and, at the end, the tool calls of the response assembled.
import type { VoiceTool } from "../engine";
import { type AssembledToolCall, ToolCallAssembler } from "./tool-call-assembler";

export type ChatToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export type ChatStreamRequest = {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  temperature: number | null;
  messages: ChatMessage[];
  tools: VoiceTool[];
  signal: AbortSignal;
  /** Fail when the provider sends nothing for this long. */
  stallMs: number;
};

export type ChatStreamEvent = { type: "text"; text: string } | { type: "end"; toolCalls: AssembledToolCall[] };

export class LlmError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LlmError";
  }
}

export function chatRequestBody({
  model,
  temperature,
  messages,
  tools,
}: Omit<ChatStreamRequest, "baseUrl" | "apiKey" | "signal" | "stallMs">) {
  return {
    model,
    stream: true,
    messages,
    ...(temperature !== null && { temperature }),
    ...(tools.length > 0 && {
      tools: tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description ?? "", parameters: t.parameters },
      })),
      tool_choice: "auto",
    }),
  };
}

export async function* streamChat(request: ChatStreamRequest): AsyncGenerator<ChatStreamEvent> {
  // a provider that stops sending mid-answer must not hold the caller in silence
  const stall = new AbortController();
  let timer = setTimeout(() => stall.abort(), request.stallMs);
  const alive = () => {
    clearTimeout(timer);
    timer = setTimeout(() => stall.abort(), request.stallMs);
  };
  const signal = AbortSignal.any([request.signal, stall.signal]);
  try {
    const response = await fetch(`${request.baseUrl.replace(/\/$/, "")}/chat/completions`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(request.apiKey && { Authorization: `Bearer ${request.apiKey}` }),
      },
      body: JSON.stringify(chatRequestBody(request)),
      signal,
    });
    if (!response.ok || !response.body) {
      const detail = await response.text().catch(() => "");
      throw new LlmError(`LLM provider answered HTTP ${response.status}${detail ? `: ${detail.slice(0, 200)}` : ""}`);
    }
    const assembler = new ToolCallAssembler();
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const bytes of response.body) {
      alive();
      buffered += decoder.decode(bytes, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") return yield { type: "end", toolCalls: assembler.done() };
        const chunk = JSON.parse(data);
        const delta = chunk.choices?.[0]?.delta;
        if (typeof delta?.content === "string" && delta.content) yield { type: "text", text: delta.content };
        if (Array.isArray(delta?.tool_calls)) assembler.add(delta.tool_calls);
      }
    }
    // a stream that ends without [DONE] still ended
    yield { type: "end", toolCalls: assembler.done() };
  } catch (error) {
    if (stall.signal.aborted && !request.signal.aborted)
      throw new LlmError(`LLM provider sent nothing for ${request.stallMs} ms`);
    if (request.signal.aborted) return;
    throw error instanceof LlmError ? error : new LlmError(`LLM provider: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}
