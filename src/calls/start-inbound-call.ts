// An inbound websocket call's start: its variables, the call_context answer over them, then the call
// itself under the callId the POST named; null when call_context refused it.
import { createOutboundGuard } from "../net/outbound-guard";
import { prepareInboundCall } from "./call-context";
import type { CallHandle, CallerTransport } from "./caller-transport";
import type { CallAssistant } from "./load-assistant";
import { startCall, type CallDeps, type CallStart } from "./run-call";

export async function startInboundCall(
  deps: CallDeps,
  assistant: CallAssistant,
  transport: CallerTransport,
  given: Record<string, string>,
  start: CallStart = {},
): Promise<CallHandle | null> {
  const prepared = await prepareInboundCall(
    assistant,
    transport.descriptor,
    given,
    createOutboundGuard(deps.config.outbound),
  );
  if (prepared.rejected) return null;
  return startCall(deps, assistant, transport, { ...start, callId: prepared.callId, variables: prepared.variables });
}
