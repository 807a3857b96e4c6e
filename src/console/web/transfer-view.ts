// A call's transfers as the call page shows them: to whom, how (the transfer tool's mode and method,
// or the transport's own hand-over on websocket calls), and what came of each attempt.
import type { AgentTask, Assistant, Message } from "./api";
import { h } from "./dom";
import { handoffToolNames } from "./handoff-view";

type Extension = Assistant["extensions"][number];

/** How the assistant's transfer tool of that name hands a caller over. */
function howOf(toolName: string, extensions: Extension[], transport: AgentTask["transport"]) {
  const tool = extensions.find(
    (e) => e.type === "transfer_call" && (e.parameters?.name ?? "transfer_call") === toolName,
  )?.parameters;
  const mode = tool?.mode ?? "blind";
  // a warm transfer always dials the second leg on SIP; a refused REFER falls back to it (the outcome says)
  if (transport?.type === "sip")
    return `${mode}, ${tool?.method === "dial" || mode === "warm" ? "bridged second leg" : "SIP REFER"}`;
  // a Twilio Media Streams call is a websocket call to the API (the bridge redirects it with Twilio's call update)
  return `${mode}, handed to the websocket client`;
}

/** One line per transfer attempt (a transfer tool call with its result), and the end it led to. */
export function transferFacts(task: AgentTask, messages: Message[], extensions: Extension[]): Node | null {
  const handoffs = handoffToolNames(extensions);
  const attempts = messages.flatMap((m, i) => {
    const destination = (m.parameters as { destination?: unknown } | undefined)?.destination;
    if (m.type !== "tool_call" || typeof destination !== "string" || handoffs.has(String(m.toolName))) return [];
    const result = messages.slice(i + 1).find((r) => r.type === "tool_result" && r.toolName === m.toolName);
    return [{ to: destination, tool: String(m.toolName), outcome: String(result?.text ?? "(no result)") }];
  });
  if (attempts.length === 0 && !task.transferredTo) return null;
  return h(
    "div",
    { id: "call-transfer" },
    attempts.map((a) =>
      h(
        "div",
        { className: "transfer-attempt" },
        h("strong", {}, a.to),
        ` (${howOf(a.tool, extensions, task.transport)}): ${a.outcome}`,
      ),
    ),
    task.transferredTo ? h("div", { className: "transfer-result" }, `Transferred to ${task.transferredTo}`) : "",
  );
}
