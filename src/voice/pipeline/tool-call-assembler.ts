// Streamed tool calls arrive as fragments: the first of each `index` carries id and name, later ones
// pieces of the JSON `arguments` string. They are joined by index and read once the stream finished.
export type AssembledToolCall = { id: string; name: string; arguments: string };

type Fragment = { index?: number; id?: string | null; function?: { name?: string | null; arguments?: string | null } };

export class ToolCallAssembler {
  private readonly calls = new Map<number, AssembledToolCall>();

  add(fragments: Fragment[]) {
    for (const fragment of fragments) {
      const index = fragment.index ?? 0;
      let call = this.calls.get(index);
      if (!call) {
        call = { id: "", name: "", arguments: "" };
        this.calls.set(index, call);
      }
      if (fragment.id) call.id = fragment.id;
      if (fragment.function?.name) call.name += fragment.function.name;
      if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
    }
  }

  /** The calls in index order; a call the provider sent without an id gets one, so its result can be matched. */
  done(): AssembledToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
  }
}
