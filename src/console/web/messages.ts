// One line of a call's messages (text, tool call, tool result), as the call page and the Tests page show it.
import type { Message } from "./api";
import { h } from "./dom";

export function messageLine(m: Message): HTMLElement {
  if (m.type === "text")
    return h(
      "div",
      { className: `msg ${m.role.toLowerCase()}` },
      h("span", { className: "role" }, m.role),
      String(m.text),
    );
  if (m.type === "tool_call")
    return h("div", { className: "msg tool" }, `→ ${m.toolName}(${JSON.stringify(m.parameters)})`);
  if (m.type === "tool_result") return h("div", { className: "msg tool" }, `← ${m.toolName}: ${m.text}`);
  return h("div", { className: "msg note" }, `${m.role}: (audio without transcript)`);
}
