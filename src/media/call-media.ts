// What a SIP call needs of its media, wherever the RTP runs: in the bridge's event loop (RtpSession
// itself) or on the bridge's media thread (media-thread.ts), where signalling and call start-up cannot
// delay the paced sending.
import type { Codec } from "./codecs";
import type { CallerQuality } from "./rtcp-reporter";

/** What the SDP negotiation settled; a re-INVITE may change any of it. */
export type MediaTarget = {
  address: string;
  port: number;
  codec: Codec;
  dtmfPayloadType: number | null;
  /** Whether the caller sends to us (false on hold) and wants our audio. */
  receiving: boolean;
  sending: boolean;
};

/** One call's RTP figures at its end: ours sent and skipped, the caller's received and lost. */
export type MediaStats = { sent: number; skipped: number; received: number; lost: number; jitterMs: number };
/** The figures of media that never ran (or whose thread died with them). */
export const noStats: MediaStats = { sent: 0, skipped: 0, received: 0, lost: 0, jitterMs: 0 };

export type MediaHandlers = {
  /**
   * A frame of caller audio: decoded (a fresh frame, the call's to keep), and as it came when the
   * caller talks mu-law (PCMU), so a provider that takes mu-law gets the caller's own bytes (null for
   * A-law); those are valid during the call only.
   */
  onAudio(pcm: Int16Array, ulaw: Uint8Array | null): void;
  onDigit(digit: string): void;
  onTimeout(): void;
};

export type MediaOptions = { timeoutMs: number; rtcpIntervalMs?: number };

export interface CallMedia {
  readonly port: number;
  /**
   * Applies a negotiated offer/answer; a new address unlatches, so a moved caller is followed. Settles
   * once the media has it: our answer must not reach the caller before (its RTP would be dropped).
   */
  configure(target: MediaTarget): Promise<void> | void;
  /** Starts sending and watching for silence from the caller (after the answer went out). */
  start(): void;
  /** One 20 ms frame of agent audio at 8 kHz, encoded at once (the frame is not kept). */
  playAudio(frame: Int16Array): void;
  /** Barge-in: frames not sent yet are dropped (a pause ends). */
  clearAudio(): void;
  /** A pause: frames not sent yet wait (silence goes out meanwhile) until resumeAudio. */
  pauseAudio(): void;
  resumeAudio(): void;
  /**
   * Joins this call's RTP with another's of the same media (a bridged transfer): each side's packets go
   * to the other as they arrive, and neither sends agent audio any more. Audio still reaches the handlers.
   */
  relay(peer: CallMedia): void;
  /** Stops the media and frees its ports; resolves with the call's figures. */
  close(): Promise<MediaStats>;
  /** What the caller's RTCP reports said of our audio (null: it sent none). */
  readonly callerQuality: CallerQuality | null;
  /**
   * How far ahead of its play time this media takes agent frames: it paces and buffers them itself, so
   * a stall of the event loop that hands them over shorter than this is not heard (0: none).
   */
  readonly leadMs: number;
}

export type OpenMedia = (handlers: MediaHandlers, options: MediaOptions) => Promise<CallMedia>;

/** The handlers' audio from an RTP payload: decoded, and the payload itself when it is mu-law. */
export const deliverPayload = (handlers: MediaHandlers, payload: Uint8Array, codec: Codec) =>
  handlers.onAudio(codec.decode(payload), codec.name === "PCMU" ? payload : null);
