// One chat-completions request to the environment's provider (OPENAI_BASE_URL, OPENAI_API_KEY): the
// simulated caller's turns and the judge's verdicts. Runs in the worker (Node), so plain fetch only.
import type { Config } from "../config";

export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: unknown[] };

export type ChatChoice = {
  content: string | null;
  toolCalls: { name: string; arguments: string }[];
};

export class ChatProviderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ChatProviderError";
  }
}

/** The first choice of the answer; throws ChatProviderError on any failure (network, status, time-out, shape). */
export async function chatCompletion(
  config: Pick<Config, "voice">,
  body: Record<string, unknown>,
  timeoutMs = 30_000,
): Promise<ChatChoice> {
  let response: Response;
  try {
    response = await fetch(`${config.voice.baseUrl.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(config.voice.openaiApiKey && { Authorization: `Bearer ${config.voice.openaiApiKey}` }),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new ChatProviderError(`chat completions unreachable: ${(error as Error).message}`);
  }
  if (!response.ok) throw new ChatProviderError(`chat completions answered ${response.status}`);
  const answer = (await response.json().catch(() => null)) as {
    choices?: {
      message?: { content?: string | null; tool_calls?: { function?: { name?: string; arguments?: string } }[] };
    }[];
  } | null;
  const message = answer?.choices?.[0]?.message;
  if (!message) throw new ChatProviderError("chat completions answered without a choice");
  return {
    content: message.content ?? null,
    toolCalls: (message.tool_calls ?? []).map((c) => ({
      name: c.function?.name ?? "",
      arguments: c.function?.arguments ?? "",
    })),
  };
}
