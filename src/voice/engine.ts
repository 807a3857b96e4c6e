// The one interface the call bridge drives a live conversation through, whatever the provider.
import type { EventEmitter } from "node:events";
import type { Config } from "../config";
import type { ToolSpec } from "../models/tool-schema";
import type { TurnTaking } from "./turn-taking/turn-taking";

export type TranscriptRole = "USER" | "ASSISTANT";

/** Non-final events carry the text so far of the utterance; the final one carries all of it. */
export type TranscriptEvent = { role: TranscriptRole; text: string; final: boolean };

export type ToolCallEvent = { callId: string; name: string; arguments: Record<string, unknown> };

export type EndCallEvent = { reason: string | null };

/**
 * A caller's turn ended and the agent answers it (audio turns; times on performance.now()'s clock):
 * `endedAt` the end of the caller's last speech of the turn, `decidedAt` when the turn was decided.
 * `preemptive`: the answer was started before the turn was decided (preemptive generation).
 */
export type CallerTurnEvent = { endedAt: number; decidedAt: number; preemptive: boolean };

/**
 * A stage of the answer to the latest caller turn, reported once per answer, after its callerTurn:
 * `llm` from the LLM request (Realtime: the response being requested) to its first token or audio,
 * `tts` from the first text sent to TTS to its first audio (emitted just before that audio).
 */
export type ReplyStageEvent = { stage: "llm" | "tts"; startedAt: number; at: number };

/** A function the LLM may call, in OpenAI function format (JSON Schema parameters). */
export type VoiceTool = ToolSpec;

/**
 * The conversation so far that a handoff's destination starts from (docs/handoff.md), in order; a
 * tool_call is always followed by its tool_result.
 */
export type ContextItem =
  | { type: "text"; role: TranscriptRole; text: string }
  | { type: "tool_call"; callId: string; name: string; arguments: Record<string, unknown> }
  | { type: "tool_result"; callId: string; output: string };

export type VoiceSessionEvents = {
  /** Agent speech, PCM16 mono at the session's sampleRate, in provider-sized chunks. */
  audio: [samples: Int16Array];
  transcript: [event: TranscriptEvent];
  /** Answer every call with submitToolResult(callId, output); calls may overlap. */
  toolCall: [event: ToolCallEvent];
  /** The agent used the built-in end_call tool: hang up once its last words have played. */
  endCall: [event: EndCallEvent];
  /** The caller started speaking: drop agent audio queued for playback (barge-in). */
  interrupt: [];
  /** The caller may be cutting in (turn_taking's interruption): hold the agent's audio where it is. */
  pause: [];
  /** It was no interruption: the agent's audio goes on from where the pause held it. */
  resume: [];
  /**
   * The caller went quiet in a turn (`on`; the VAD ends it with the frame that completes its wait, so
   * each frame counts as it arrives), or that pause is over. Not every engine tells it.
   */
  callerPausing: [on: boolean];
  /**
   * The caller's turn ended and gets no answer: nothing was understood (`text` blank), or it was said
   * while the agent spoke and did not cut it off (an acknowledgement, too short); `text` joins the messages.
   */
  unanswered: [text: string];
  /** The agent finished a response (all of its audio has been emitted); `interrupted`: the caller cut it off. */
  turnDone: [info: { interrupted: boolean }];
  /** Latency per turn (design.md): the stage boundaries the engine knows, read by calls/turn-latency.ts. */
  callerTurn: [event: CallerTurnEvent];
  replyStage: [event: ReplyStageEvent];
  /** Something went wrong; the session may go on. Only `closed` means it is over. */
  error: [error: Error];
  /** Emitted exactly once, whoever ended the session. */
  closed: [info: { reason: string }];
};

export interface VoiceSession extends EventEmitter<VoiceSessionEvents> {
  /** Rate of the audio pushed in and emitted (the call's rate). */
  readonly sampleRate: number;
  /**
   * Caller audio, PCM16 mono at sampleRate (the session may keep it). Dropped once the session is
   * closed. `ulaw`, when given, is the same frame in G.711 mu-law as the caller sent it: a provider
   * that takes 8 kHz mu-law gets these bytes unchanged (no decode and re-encode); they are only
   * valid during the call.
   */
  sendAudio(samples: Int16Array, ulaw?: Uint8Array | null): void;
  /** A user message as text (e.g. "The caller pressed 1"); the agent answers it. */
  sendText(text: string): void;
  submitToolResult(callId: string, output: string): void;
  /** Speaks `text` now, word for word (a voicemail or transfer message; the greeting of a call that waits for none). */
  greet(text: string): void;
  /** The greeting that waits for the callee is spoken now (they stayed silent); nothing once it was spoken. */
  greetIfWaiting(): void;
  /** The agent answers the conversation as it stands (a handoff's destination, the caller's last words). */
  respond(): void;
  close(): void;
}

export type VoiceStrategy = { type: string; parameters: Record<string, unknown> };

export type VoiceSessionOptions = {
  instructions: string;
  /** Spoken first, verbatim, when set; otherwise the agent waits for the caller. */
  greeting: string | null;
  /**
   * An outbound call's opening: the greeting is not spoken at once but waits for the callee. It is
   * the answer to their first turn ("Hello?"), word for word and instead of the LLM's, unless
   * greetIfWaiting() spoke it before (they stayed silent). Either way it is spoken once.
   */
  greetingWaitsForCallee?: boolean;
  tools: VoiceTool[];
  sampleRate: number;
  config: Config;
  /** text: the caller's turns come by sendText and the agent answers in transcripts only (default audio) */
  modality?: "audio" | "text";
  /** the assistant's turn_taking, resolved (src/voice/turn-taking/); default: as without the extension */
  turnTaking?: TurnTaking;
  /** a handoff's destination: the conversation it is told of before anything else (default none) */
  context?: ContextItem[];
};

/** The greeting that waits for the callee (an outbound call's, which has audio), or null: then any greeting is spoken at once. */
export const waitingGreetingOf = (
  options: Pick<VoiceSessionOptions, "greeting" | "greetingWaitsForCallee" | "modality">,
) => (options.greetingWaitsForCallee && options.modality !== "text" ? options.greeting : null);

export class UnknownStrategyTypeError extends Error {
  constructor(readonly strategyType: string) {
    super(`unknown LLM generation strategy type "${strategyType}"`);
    this.name = "UnknownStrategyTypeError";
  }
}

/** The provider could not be reached or refused the session before it was ready. */
export class VoiceConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VoiceConnectError";
  }
}
