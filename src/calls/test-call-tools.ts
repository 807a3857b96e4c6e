// A test call's tools (design.md, "Scenarios and suites"): the first matching mock answers, after its
// delay; an unmocked tool gets the generic error string under toolPolicy mock, or reaches its real
// webhook (through the outbound guard, like any call's) under toolPolicy live.
import { log } from "../log";
import { matchMock, mockOutputText, type ToolMock } from "../testing/tool-mocks";
import { runToolCall, type ToolCallOutcome, type ToolCallRequest } from "./run-tool-call";
import { toolFailureMessage } from "./tool-webhook";

export type TestToolSetup = { toolMocks: ToolMock[]; toolPolicy: "mock" | "live" };
/** What a test call brings to its call: its run and result, variables, tool mocks and time limit. */
export type TestCallSetup = TestToolSetup & {
  runId: string;
  resultId: string;
  variables: Record<string, string>;
  maxCallMs: number;
};
export type ToolRunner = (request: ToolCallRequest) => Promise<ToolCallOutcome>;

export function testToolRunner({ toolMocks, toolPolicy }: TestToolSetup): ToolRunner {
  return async (request) => {
    const { event } = request;
    const mock = matchMock(toolMocks, event.name, event.arguments);
    const fields = { callId: request.callId, tool: event.name, toolCallId: event.callId };
    if (mock) {
      const started = performance.now();
      // a hang-up or a canceled run ends the call at once, not after the mock's delay
      if (mock.delayMs) await delay(mock.delayMs, request.callEnded);
      log.info("call", { ...fields, event: "tool_result", mocked: true });
      return { output: mockOutputText(mock), durationMs: Math.round(performance.now() - started) };
    }
    if (toolPolicy === "live") return runToolCall(request);
    log.info("call", { ...fields, event: "tool_result", mocked: false, ok: false, error: "no mock matched" });
    return { output: toolFailureMessage, durationMs: 0 };
  };
}

function delay(ms: number, cut?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (cut?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    cut?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
