// Answers a transfer_call tool call: the destination's message is spoken first, then the transport
// hands the caller over. The session ends the call on success, or on failure with onFailure: hangup;
// otherwise the LLM learns why it failed and the call goes on with the assistant.
import { log } from "../log";
import type { ToolCallEvent } from "../voice/engine";
import type { TransferTool } from "../voice/tools";
import type { BridgedCall, CallerTransport } from "./caller-transport";
import { renderTemplate } from "./templates";

export type TransferCall = {
  callId: string;
  event: ToolCallEvent;
  tool: TransferTool;
  transport: CallerTransport;
  variables: Readonly<Record<string, string>>;
  /** Speaks the text to the caller; settles once it has played (or could not be). */
  speak(text: string): Promise<void>;
  /** A warm transfer's briefing of the human on the pending legs: true once they are joined. */
  brief(bridged: BridgedCall): Promise<{ joined: true } | { joined: false; why: string }>;
};

export type TransferOutcome = {
  output: string;
  durationMs: number;
  /** the destination's `to` once the caller is with it */
  transferredTo: string | null;
  /** the transfer failed and onFailure is hangup */
  hangup: boolean;
  /** a bridged transfer: the legs joined through us, until either hangs up */
  bridged: BridgedCall | null;
};

export async function runTransfer({
  callId,
  event,
  tool,
  transport,
  variables,
  speak,
  brief,
}: TransferCall): Promise<TransferOutcome> {
  const started = performance.now();
  const { destinations, ringTimeoutMs, method, mode, onFailure } = tool.transfer;
  const finish = (output: string, transferredTo: string | null = null, hangup = false): TransferOutcome => ({
    output,
    durationMs: Math.round(performance.now() - started),
    transferredTo,
    hangup,
    bridged: null,
  });
  const to = event.arguments.destination;
  const destination = destinations.find((d) => d.to === to);
  if (!destination)
    return finish(
      `There is no destination ${JSON.stringify(to)}: use one of ${destinations.map((d) => d.to).join(", ")}.`,
    );
  if (!transport.transfer) return finish("Transfer is unavailable on this call.");
  const fields = { callId, tool: event.name, toolCallId: event.callId, to: destination.to, method };
  await speak(renderTemplate(destination.message, variables));
  log.info("call", { ...fields, event: "transfer_started", spokenMs: Math.round(performance.now() - started) });
  let attempt = await transport.transfer({ to: destination.to, ringTimeoutMs, method, mode });
  if (attempt.ok && attempt.bridged?.pending) {
    const briefed = await brief(attempt.bridged);
    if (!briefed.joined) attempt = { ok: false, why: briefed.why };
  }
  log.info("call", {
    ...fields,
    event: "transfer_ended",
    ok: attempt.ok,
    why: attempt.ok ? null : attempt.why,
    durationMs: Math.round(performance.now() - started),
  });
  if (attempt.ok)
    return {
      ...finish(`The caller was transferred to ${destination.to}.`, destination.to),
      bridged: attempt.bridged ?? null,
    };
  return finish(`The transfer to ${destination.to} failed: ${attempt.why}.`, null, onFailure === "hangup");
}
