// Our own wire format: binary frames of PCM16LE mono at the rate chosen at connect time, both ways,
// and JSON text messages for control (see docs/bridge.md). An optional first text message
// {"type":"start","modality":"text"|"audio"} opens the call (text: no audio either way, the caller's
// turns as {"type":"user_text","text":…}); the call starts with the first message of either kind, or
// after START_WAIT_MS without one.
import { bytesToPcm, pcmToBytes } from "../audio/pcm";
import type { CallHandle, CallerTransport } from "../calls/caller-transport";
import { closeFor, type WireProtocol, type WireSocket } from "./wire-socket";

export const nativeSampleRates = [8000, 16000, 24000] as const;

/** How long the call waits for a `start` message (or audio) before it starts as an audio call. */
export const START_WAIT_MS = 500;

export type NativeStart = { modality: "audio" | "text" };

export function nativeProtocol(
  socket: WireSocket,
  sampleRate: number,
  startCall: (transport: CallerTransport, start: NativeStart) => CallHandle,
): WireProtocol {
  let call: CallHandle | null = null;
  let open = true;
  let wait: ReturnType<typeof setTimeout> | undefined;
  const send = (message: object) => open && socket.sendText(JSON.stringify(message));
  const transport: CallerTransport = {
    descriptor: { type: "websocket" },
    sampleRate,
    playAudio: (frame) => open && socket.sendFrame(pcmToBytes(frame)),
    leadMs: socket.frameLeadMs,
    clearAudio: () => {
      socket.clearFrames();
      send({ type: "interrupt" });
    },
    notify: (notice) => send(notice),
    // the client carries the caller on to the destination; our side of the call is done
    transfer: async ({ to, mode }) => {
      if (!open) return { ok: false, why: "the caller hung up" };
      send({ type: "transfer", to, mode });
      return { ok: true };
    },
    hangup(reason) {
      if (open) socket.close(...closeFor(reason));
      open = false;
    },
  };
  const begin = (start: NativeStart) => {
    if (call) return call;
    clearTimeout(wait);
    call = startCall(transport, start);
    return call;
  };
  return {
    onOpen: () => {
      wait = setTimeout(() => begin({ modality: "audio" }), START_WAIT_MS);
    },
    onMessage(message) {
      if (typeof message !== "string") return begin({ modality: "audio" }).callerAudio(bytesToPcm(message));
      let parsed: { type?: unknown; modality?: unknown; text?: unknown } | null = null;
      try {
        parsed = JSON.parse(message);
      } catch {}
      if (parsed?.type === "start" && !call) begin({ modality: parsed.modality === "text" ? "text" : "audio" });
      else if (parsed?.type === "start")
        send({ type: "error", message: "start ignored: it must be the first message" });
      else if (parsed?.type === "user_text" && typeof parsed.text === "string")
        begin({ modality: "text" }).callerText(parsed.text);
      else if (parsed?.type === "hangup") call?.callerHangup();
      else
        send({
          type: "error",
          message: 'unknown message: send binary audio frames, {"type":"user_text","text":…} or {"type":"hangup"}',
        });
    },
    onClose() {
      open = false;
      clearTimeout(wait);
      call?.callerHangup();
    },
  };
}
