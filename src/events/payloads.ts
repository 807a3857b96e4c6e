// The call event payloads of the spec (Events section), defined once for the bridge and the hooks.
import type { CallDirection, EndedReason, Transport } from "../db/schema";
import type { CallAnalysis } from "../voice/call-analysis";
import type { VoiceToVoice } from "../models/call-latency";

export type MessageRole = "USER" | "ASSISTANT" | "SYSTEM" | "TOOL_CALL" | "TOOL_CALL_RESULT" | "UNKNOWN";
type SpokenRole = Extract<MessageRole, "USER" | "ASSISTANT" | "SYSTEM" | "UNKNOWN">;

export type TextMessage = { type: "text"; role: SpokenRole; timestamp: number; text: string };
export type AudioMessage = { type: "audio"; role: SpokenRole; timestamp: number; audio: string };
export type ToolCallMessage = {
  type: "tool_call";
  role: "TOOL_CALL";
  timestamp: number;
  callId: string;
  toolName: string;
  parameters: Record<string, unknown>;
};
export type ToolResultMessage = {
  type: "tool_result";
  role: "TOOL_CALL_RESULT";
  timestamp: number;
  callId: string;
  toolName: string;
  text: string;
  /** how long the tool took (ms) */
  durationMs?: number;
};
export type CallMessage = TextMessage | AudioMessage | ToolCallMessage | ToolResultMessage;

export type CallStartedPayload = {
  type: "call_started";
  callId: string;
  startedAt: number | null;
  transport: Transport | null;
  direction: CallDirection;
};

export type CallConcludedPayload = {
  type: "call_concluded";
  callId: string;
  startedAt: number | null;
  endedAt: number | null;
  shortSummary: string | null;
  summary: string | null;
  callRecording: string | null;
  /** RECORDING_STORE=s3: a presigned GET URL of the recording (design.md, "Recordings in object storage") */
  recordingUrl?: string | null;
  transport: Transport | null;
  messages: CallMessage[];
  direction: CallDirection;
  endedReason: EndedReason | null;
  /** the destination's `to` as configured, when the caller was handed to a human */
  transferredTo?: string | null;
  /** every variable the call's templates saw; omitted when it had none (a call that never ran) */
  variables?: Record<string, string> | null;
  /** the call_analysis extension's result; omitted when the assistant has none */
  analysis?: CallAnalysis | null;
  /** voice-to-voice over the call's turns (design.md, "Latency per turn"); omitted when no turn has it */
  latency?: { voiceToVoiceMs: VoiceToVoice } | null;
  /** the assistants the caller was handed to, in order (`at` Unix ms); omitted when none */
  handoffs?: CallHandoff[];
};

/** One handoff of a call (docs/handoff.md); an agent's call's first has fromAssistantId null. */
export type CallHandoff = { at: number; fromAssistantId: string | null; toAssistantId: string; destination: string };

export type CallEventPayload = CallStartedPayload | CallConcludedPayload;

/**
 * A copy without null or undefined object fields, at any depth. Array elements keep their positions
 * (a null inside a list is a value, not an absent field).
 */
export function stripNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripNulls);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = stripNulls(v);
    return out;
  }
  return value;
}

/** A message without its null fields; a tool call's parameters are the LLM's arguments and keep theirs. */
function messageWithoutNulls(message: CallMessage): unknown {
  if (message.type !== "tool_call") return stripNulls(message);
  const { parameters, ...fields } = message;
  return { ...(stripNulls(fields) as object), parameters };
}

/** The exact JSON body sent for an event: null fields omitted, messages in chronological order. */
export function serializePayload(event: CallEventPayload): string {
  if (event.type === "call_started") return JSON.stringify(stripNulls(event));
  const { messages, ...fields } = event;
  // a stable sort keeps the bridge's order for messages with the same timestamp
  const ordered = [...messages].sort((a, b) => a.timestamp - b.timestamp).map(messageWithoutNulls);
  return JSON.stringify({ ...(stripNulls(fields) as object), messages: ordered });
}
