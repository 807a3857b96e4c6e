// Our own wire format: binary frames of PCM16LE mono at the rate chosen at connect time, both ways,
// and JSON text messages for control (see docs/bridge.md).
import { bytesToPcm, pcmToBytes } from "../audio/pcm";
import type { CallHandle, CallerTransport } from "../calls/caller-transport";
import { closeFor, type WireProtocol, type WireSocket } from "./wire-socket";

export const nativeSampleRates = [8000, 16000, 24000] as const;

export function nativeProtocol(
  socket: WireSocket,
  sampleRate: number,
  startCall: (transport: CallerTransport) => CallHandle,
): WireProtocol {
  let call: CallHandle | null = null;
  let open = true;
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
    hangup(reason) {
      if (open) socket.close(...closeFor(reason));
      open = false;
    },
  };
  return {
    onOpen: () => {
      call = startCall(transport);
    },
    onMessage(message) {
      if (typeof message !== "string") return call?.callerAudio(bytesToPcm(message));
      let parsed: { type?: unknown } | null = null;
      try {
        parsed = JSON.parse(message);
      } catch {}
      if (parsed?.type === "hangup") call?.callerHangup();
      else send({ type: "error", message: 'unknown message: send binary audio frames or {"type":"hangup"}' });
    },
    onClose() {
      open = false;
      call?.callerHangup();
    },
  };
}
