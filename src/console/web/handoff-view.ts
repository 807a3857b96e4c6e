// A call's handoffs on its transcript (docs/handoff.md): a line where each destination took the call,
// between what was said before it and after, so the page shows who spoke when.
import type { AgentTask, Message } from "./api";
import { h } from "./dom";
import { messageLine } from "./messages";

type Handoff = AgentTask["handoffs"][number];

/** The tool names of an assistant's handoff extensions: their calls are handoffs, not transfers. */
export const handoffToolNames = (extensions: { type: string; parameters?: { name?: unknown } }[]) =>
  new Set([
    "handoff",
    ...extensions.flatMap((e) =>
      e.type === "handoff" && typeof e.parameters?.name === "string" ? [e.parameters.name] : [],
    ),
  ]);

function handoffLine(handoff: Handoff, nameOf: (id: string) => string) {
  const from = handoff.fromAssistantId ? nameOf(handoff.fromAssistantId) : "the agent";
  return h(
    "div",
    { className: "msg handoff", title: handoff.at },
    `⇄ ${from} handed the caller to ${nameOf(handoff.toAssistantId)} (${handoff.destination}) at ${new Date(handoff.at).toLocaleTimeString()}`,
  );
}

/** The transcript's lines, each handoff placed before the first message said after it. */
export function transcriptLines(
  messages: Message[],
  handoffs: Handoff[],
  nameOf: (id: string) => string,
): HTMLElement[] {
  const pending = [...handoffs].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const lines: HTMLElement[] = [];
  for (const m of messages) {
    while (pending.length > 0 && Date.parse(pending[0]!.at) <= Number(m.timestamp))
      lines.push(handoffLine(pending.shift()!, nameOf));
    lines.push(messageLine(m));
  }
  return [...lines, ...pending.map((handoff) => handoffLine(handoff, nameOf))];
}
