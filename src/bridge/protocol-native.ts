// Our own wire format: binary frames of PCM16LE mono at the rate chosen at connect time, both ways,
// and JSON text messages for control (see docs/bridge.md). An optional first text message
// {"type":"start","variables":{…}} gives the call's variables: the call starts with the first message
// of either kind, or after START_WAIT_MS without one.
import { bytesToPcm, pcmToBytes } from "../audio/pcm";
import type { CallHandle, CallerTransport } from "../calls/caller-transport";
import { stringVariables } from "../calls/call-context";
import { closeFor, refusedByContext, type WireProtocol, type WireSocket } from "./wire-socket";

export const nativeSampleRates = [8000, 16000, 24000] as const;

/** How long the call waits for a `start` message (or audio) before it starts without variables. */
export const START_WAIT_MS = 500;

export function nativeProtocol(
  socket: WireSocket,
  sampleRate: number,
  /** null: the call was refused (call_context) */
  startCall: (transport: CallerTransport, variables: Record<string, string>) => Promise<CallHandle | null>,
): WireProtocol {
  let call: CallHandle | null = null;
  let open = true;
  let begun = false;
  let wait: ReturnType<typeof setTimeout> | undefined;
  const send = (message: object) => open && socket.sendText(JSON.stringify(message));
  const transport: CallerTransport = {
    descriptor: { type: "websocket" },
    sampleRate,
    playAudio: (frame) => open && socket.sendBinary(pcmToBytes(frame)),
    clearAudio: () => send({ type: "interrupt" }),
    notify: (notice) => send(notice),
    hangup(reason) {
      if (open) socket.close(...closeFor(reason));
      open = false;
    },
  };
  const begin = (variables: Record<string, string>) => {
    if (begun) return;
    begun = true;
    clearTimeout(wait);
    void startCall(transport, variables).then((handle) => {
      if (!handle) {
        if (open) socket.close(...refusedByContext);
        open = false;
        return;
      }
      call = handle;
      if (!open) handle.callerHangup(); // the caller left while call_context answered
    });
  };
  return {
    onOpen: () => {
      wait = setTimeout(() => begin({}), START_WAIT_MS);
    },
    onMessage(message) {
      if (typeof message !== "string") {
        begin({});
        return call?.callerAudio(bytesToPcm(message));
      }
      let parsed: { type?: unknown; variables?: unknown } | null = null;
      try {
        parsed = JSON.parse(message);
      } catch {}
      if (parsed?.type === "start" && !begun) begin(stringVariables(parsed.variables));
      else if (parsed?.type === "start")
        send({ type: "error", message: "start ignored: it must be the first message" });
      else if (parsed?.type === "hangup") call?.callerHangup();
      else send({ type: "error", message: 'unknown message: send binary audio frames or {"type":"hangup"}' });
    },
    onClose() {
      open = false;
      clearTimeout(wait);
      call?.callerHangup();
    },
  };
}
