// Our own wire format: binary frames of PCM16LE mono at the rate chosen at connect time, both ways,
// and JSON text messages for control (see docs/bridge.md). An optional first text message
// {"type":"start","variables":{…},"modality":"text"|"audio"} gives the call's variables and opens it
// (text: no audio either way, the caller's turns as {"type":"user_text","text":…}); the call starts with
// the first message of either kind, or after START_WAIT_MS without one.
import { bytesToPcm, pcmToBytes } from "../audio/pcm";
import type { CallHandle, CallerTransport } from "../calls/caller-transport";
import { stringVariables } from "../calls/call-context";
import { closeFor, refusedByContext, type WireProtocol, type WireSocket } from "./wire-socket";

export const nativeSampleRates = [8000, 16000, 24000] as const;

/** How long the call waits for a `start` message (or audio) before it starts without variables. */
export const START_WAIT_MS = 500;

export type NativeStart = { variables: Record<string, string>; modality: "audio" | "text" };

export function nativeProtocol(
  socket: WireSocket,
  sampleRate: number,
  /** null: the call was refused (call_context) */
  startCall: (transport: CallerTransport, start: NativeStart) => Promise<CallHandle | null>,
): WireProtocol {
  let call: CallHandle | null = null;
  let open = true;
  let begun = false;
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
    pauseAudio: () => socket.pauseFrames(),
    resumeAudio: () => socket.resumeFrames(),
    expediteInput: (on) => socket.expediteReceived?.(on),
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
    if (begun) return;
    begun = true;
    clearTimeout(wait);
    void startCall(transport, start).then((handle) => {
      if (!handle) {
        if (open) socket.close(...refusedByContext);
        open = false;
        return;
      }
      call = handle;
      if (!open) handle.callerHangup(); // the caller left while call_context answered
    });
  };
  const audioCall = { variables: {}, modality: "audio" } as const;
  return {
    onOpen: () => {
      wait = setTimeout(() => begin(audioCall), START_WAIT_MS);
    },
    onMessage(message) {
      if (typeof message !== "string") {
        begin(audioCall);
        return call?.callerAudio(bytesToPcm(message));
      }
      let parsed: { type?: unknown; variables?: unknown; modality?: unknown; text?: unknown } | null = null;
      try {
        parsed = JSON.parse(message);
      } catch {}
      if (parsed?.type === "start" && !begun)
        begin({
          variables: stringVariables(parsed.variables),
          modality: parsed.modality === "text" ? "text" : "audio",
        });
      else if (parsed?.type === "start")
        send({ type: "error", message: "start ignored: it must be the first message" });
      // a text call's turns come once it is ready (after its greeting's turn_done)
      else if (parsed?.type === "user_text" && typeof parsed.text === "string") call?.callerText(parsed.text);
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
