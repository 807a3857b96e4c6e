// A handoff's conversation so far as chat completions messages: each tool call an assistant message
// of its own, answered by its tool message right after, as the API wants them.
import type { ContextItem } from "../engine";
import type { ChatMessage } from "./chat-stream";

export function contextMessages(context: readonly ContextItem[]): ChatMessage[] {
  return context.map((item): ChatMessage => {
    if (item.type === "text")
      return item.role === "USER" ? { role: "user", content: item.text } : { role: "assistant", content: item.text };
    if (item.type === "tool_result") return { role: "tool", tool_call_id: item.callId, content: item.output };
    return {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: item.callId, type: "function", function: { name: item.name, arguments: JSON.stringify(item.arguments) } },
      ],
    };
  });
}
