// The one seam between a call and whatever carries its audio (our websocket format, Twilio Media
// Streams, later SIP/RTP): audio at one rate both ways, hangup both ways, a descriptor for events.
import type { Transport } from "../db/schema";
import type { CallerQuality } from "../media/rtcp-reporter";
import type { TranscriptRole } from "../voice/engine";

export const endReasons = [
  "caller-hangup",
  "agent-hangup",
  "max-duration",
  "provider-disconnected",
  "voice-unavailable",
  "bridge-error",
  "bridge-shutdown",
  "media-timeout",
  // the call could not be recorded because the database is away: refused, the caller may try again
  "database-unavailable",
  // hung up through the API (POST agent-tasks/{id}/hangup)
  "canceled",
  // handed to a human (the transfer_call tool): our leg is done
  "transferred",
  // an answering machine took the outbound call (after our message, with leave_message)
  "voicemail",
  // the caller stayed quiet through turn_taking's idle prompts
  "silence-timeout",
] as const;
export type EndReason = (typeof endReasons)[number];

/** Reasons that mark the agent task failed rather than completed. */
export const failedReasons: ReadonlySet<EndReason> = new Set([
  "provider-disconnected",
  "voice-unavailable",
  "bridge-error",
  "media-timeout",
  "database-unavailable",
]);

/** What the call tells the caller besides audio; each wire format forwards what it can express. */
export type CallNotice =
  | { type: "ready"; callId: string; sampleRate: number }
  | { type: "transcript"; role: TranscriptRole; text: string; final: boolean }
  | { type: "tool_call"; toolCallId: string; name: string; arguments: Record<string, unknown> }
  | { type: "tool_result"; toolCallId: string; name: string; output: string }
  | { type: "error"; message: string }
  /** the agent has finished its reply and no tool call is pending: the caller's turn */
  | { type: "turn_done" }
  | { type: "ended"; callId: string; reason: EndReason };

/** A transfer the transport carries out (docs/transfer.md); `to` is the destination as configured. */
export type TransferRequest = { to: string; ringTimeoutMs: number; method: "refer" | "dial"; mode: "blind" | "warm" };
/** A bridged transfer (docs/transfer.md): the caller and the destination joined through us until either hangs up. */
export type BridgedCall = {
  /** settles once both legs have ended (the transport's hangup ends both) */
  readonly ended: Promise<void>;
  /** the destination's audio (PCM16 at the transport's rate) as it arrives, for the recording */
  onAudio(handler: (samples: Int16Array) => void): void;
  /**
   * A warm transfer's legs before they are joined: the destination hears what is played here (20 ms
   * frames, up to `leadMs` early, as `playAudio`) and nothing of the caller, until `join`.
   */
  readonly pending?: { playAudio(frame: Int16Array): void; readonly leadMs: number; join(): void };
};
/**
 * `ok`: the caller is with the destination; our leg may end, or with `bridged` stays joined to the
 * destination's until either hangs up. Otherwise why not, for the LLM.
 */
export type TransferAttempt = { ok: true; bridged?: BridgedCall } | { ok: false; why: string };

/** Our side of the connection, implemented by each wire format. */
export interface CallerTransport {
  readonly descriptor: Transport;
  /** Rate of the audio in both directions (PCM16 mono). */
  readonly sampleRate: number;
  /**
   * One 20 ms frame of agent audio, due now, or up to `leadMs` early for a transport that paces frames
   * itself (the call paces them); valid only during the call (reused).
   */
  playAudio(frame: Int16Array): void;
  readonly leadMs?: number;
  /** Barge-in: drop agent audio the caller side has buffered but not played yet. */
  clearAudio(): void;
  /**
   * A pause (the caller may be cutting in): frames handed over early (up to `leadMs`) and not sent yet
   * wait, unsent, until resumeAudio; nothing is said to the caller's side. clearAudio drops them.
   */
  pauseAudio(): void;
  resumeAudio(): void;
  /**
   * `on`: the caller's audio is wanted the moment it arrives (their turn may be ending), so a transport
   * that gathers it into batches hands each frame over at once until `off`.
   */
  expediteInput?(on: boolean): void;
  notify(notice: CallNotice): void;
  /** Closes the connection from our side; called once, after the `ended` notice. */
  hangup(reason: EndReason): void;
  /** Hands the caller to a human; a transport without it cannot transfer. Never throws. */
  transfer?(request: TransferRequest): Promise<TransferAttempt>;
  /** What the caller's side reported of our audio (SIP: its RTCP), for the concluded log line. */
  mediaQuality?(): CallerQuality | null;
}

/** The caller's side: what a wire format calls when audio or a hangup arrives. */
export interface CallHandle {
  readonly callId: string;
  /** `ulaw`: the same frame as the caller sent it, when in mu-law (SIP PCMU), for passthrough. */
  callerAudio(samples: Int16Array, ulaw?: Uint8Array | null): void;
  callerHangup(): void;
  /** Keypad digits the caller pressed (SIP DTMF). */
  callerDtmf(digits: string): void;
  /** What the caller says as text (the native protocol's user_text, in the text modality). */
  callerText(text: string): void;
  /** Ends the call from our side (shutdown, a refused media destination), with the task's error if any. */
  end(reason: EndReason, error?: string): void;
  /** Settles once the task is concluded and call_concluded is written. */
  readonly done: Promise<void>;
}
