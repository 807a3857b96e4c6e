// Which mock answers a test call's tool call: the first whose tool is the called name and whose
// arguments are a subset of the call's (design.md, "Scenarios and suites").
import { isSubset } from "./subset";

export type ToolMock = { tool: string; arguments?: Record<string, unknown>; output: unknown; delayMs?: number };

export function matchMock(mocks: readonly ToolMock[], tool: string, args: Record<string, unknown>) {
  return mocks.find((m) => m.tool === tool && (m.arguments === undefined || isSubset(m.arguments, args)));
}

/** What the LLM gets from a mock: a string as it is, anything else as its JSON text. */
export const mockOutputText = (mock: ToolMock) =>
  typeof mock.output === "string" ? mock.output : JSON.stringify(mock.output);
