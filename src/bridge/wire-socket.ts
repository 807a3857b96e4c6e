// What a wire format needs of a websocket, so the formats can be driven by any socket (Bun's, tests').
import type { EndReason } from "../calls/caller-transport";
export interface WireSocket {
  sendText(text: string): void;
  sendBinary(bytes: Uint8Array): void;
  close(code: number, reason: string): void;
  /**
   * One 20 ms frame of agent audio, in the wire format's own message. A socket on the websocket
   * thread paces frames itself and takes them `frameLeadMs` early; one in the event loop sends at once.
   */
  sendFrame(frame: string | Uint8Array): void;
  /** Barge-in: frames handed over but not sent yet are dropped (a pause ends). */
  clearFrames(): void;
  /** A pause: frames handed over but not sent yet wait until resumeFrames. */
  pauseFrames(): void;
  resumeFrames(): void;
  /** `on`: what the peer sends goes to the call at once, not gathered for a batch (CallerTransport.expediteInput) */
  expediteReceived?(on: boolean): void;
  readonly frameLeadMs: number;
}

/** A wire format's handlers for one connection. */
export interface WireProtocol {
  onOpen(): void;
  onMessage(message: string | Buffer): void;
  onClose(): void;
}

/** RFC 6455 1013 "try again later": the call was refused for now (the database is away), not for good. */
export const tryAgainLater = [1013, "try again later: the service cannot take calls right now"] as const;

/** The assistant's call_context service refused the call (RFC 6455 1008: policy). */
export const refusedByContext = [1008, "call refused by the call_context service"] as const;

/** The close code and reason for a call that ended for `reason`. */
export const closeFor = (reason: EndReason): readonly [number, string] =>
  reason === "database-unavailable" ? tryAgainLater : [1000, "call ended"];
