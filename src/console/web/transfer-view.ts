// A call's transfers as the call page shows them: to whom, how (the transfer tool's mode and method,
// or the transport's own hand-over on websocket calls), and what came of each attempt.
import type { Json } from "./api";
import { h } from "./dom";

type Extension = { type: string; parameters: Json };

/** How the assistant's transfer tool of that name hands a caller over. */
function howOf(toolName: string, extensions: Extension[], transport: Json) {
  const tool = extensions.find(
    (e) => e.type === "transfer_call" && (e.parameters?.name ?? "transfer_call") === toolName,
  )?.parameters;
  const mode = tool?.mode ?? "blind";
  // a warm transfer always dials the second leg on SIP; a refused REFER falls back to it (the outcome says)
  if (transport?.type === "sip")
    return `${mode}, ${tool?.method === "dial" || mode === "warm" ? "bridged second leg" : "SIP REFER"}`;
  if (transport?.type === "twilio") return `${mode}, Twilio call update (<Dial>)`;
  return `${mode}, handed to the websocket client`;
}

/** One line per transfer attempt (a transfer tool call with its result), and the end it led to. */
export function transferFacts(task: Json, messages: Json[], extensions: Extension[]): Node | null {
  const attempts = messages.flatMap((m, i) => {
    if (m.type !== "tool_call" || typeof m.parameters?.destination !== "string") return [];
    const result = messages.slice(i + 1).find((r) => r.type === "tool_result" && r.toolName === m.toolName);
    return [
      { to: m.parameters.destination as string, tool: m.toolName as string, outcome: result?.text ?? "(no result)" },
    ];
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
