// A tiny DOM builder: h("tag", { attrs, onclick }, ...children). Text children are escaped by the DOM.
type Child = Node | string | number | null | undefined | false | Child[];
type Props = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value as EventListener);
    else if (key in el && key !== "list") (el as unknown as Props)[key] = value;
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/**
 * Calls `step` every `ms` while `node` is on the page, until it answers true (nothing more to follow);
 * a step that throws keeps what is shown and is tried again.
 */
export function poll(node: Node, ms: number, step: () => Promise<unknown>) {
  const next = () =>
    setTimeout(async () => {
      if (!node.isConnected) return;
      if ((await step().catch(() => false)) !== true) next();
    }, ms);
  next();
}

export const when = (date: string | null | undefined) => (date ? new Date(date).toLocaleString() : "");
