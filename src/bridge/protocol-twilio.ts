// Twilio Media Streams (bidirectional, <Connect><Stream>): JSON events with base64 mu-law 8 kHz audio.
// Twilio does not forward query strings on every setup, so the assistant and token may also come as
// <Parameter> custom parameters of the `start` event; then they are checked there.
import { muLawDecode, muLawEncode } from "../audio/g711";
import type { CallHandle, CallerTransport } from "../calls/caller-transport";
import type { CallAssistant } from "../calls/load-assistant";
import { AppError } from "../errors";
import { log } from "../log";
import { isDatabaseUnavailable } from "../db/unavailable";
import { stringVariables } from "../calls/call-context";
import { redirectTwilioCall, type TwilioApi } from "./twilio-call-update";
import { closeFor, refusedByContext, tryAgainLater, type WireProtocol, type WireSocket } from "./wire-socket";

type TwilioEvent = {
  event?: string;
  streamSid?: string;
  start?: { streamSid?: string; callSid?: string; customParameters?: Record<string, string> };
  media?: { track?: string; payload?: string };
};

export type TwilioOptions = {
  /** Authorized before the upgrade, or null to authorize the start event's custom parameters. */
  assistant: CallAssistant | null;
  authorize: (customParameters: Record<string, string>) => Promise<CallAssistant>;
  /** null: the call was refused (call_context) */
  startCall: (
    assistant: CallAssistant,
    transport: CallerTransport,
    variables: Record<string, string>,
  ) => Promise<CallHandle | null>;
  /** the account whose call-update API transfers calls; null: transfer is unavailable */
  twilio: TwilioApi | null;
};

// what names the assistant and authorizes the stream is not a variable (the token never is one)
const credentialParameters = new Set(["assistantId", "agentId", "token"]);

/** The custom parameters that become the call's variables. */
const callVariablesOf = (parameters: Record<string, string>) =>
  stringVariables(Object.fromEntries(Object.entries(parameters).filter(([name]) => !credentialParameters.has(name))));

export function twilioProtocol(socket: WireSocket, options: TwilioOptions): WireProtocol {
  let call: CallHandle | null = null;
  let streamSid = "";
  let callSid = "";
  let open = true;
  const send = (message: object) => open && socket.sendText(JSON.stringify({ ...message, streamSid }));
  const close = (code: number, reason: string) => {
    if (open) socket.close(code, reason);
    open = false;
  };
  const transport: CallerTransport = {
    descriptor: { type: "websocket" },
    sampleRate: 8000,
    playAudio: (frame) => {
      const media = { payload: Buffer.from(muLawEncode(frame)).toString("base64") };
      if (open) socket.sendFrame(JSON.stringify({ event: "media", media, streamSid }));
    },
    leadMs: socket.frameLeadMs,
    clearAudio: () => {
      socket.clearFrames();
      send({ event: "clear" });
    },
    pauseAudio: () => socket.pauseFrames(),
    resumeAudio: () => socket.resumeFrames(),
    expediteInput: (on) => socket.expediteReceived?.(on),
    notify: () => {}, // Twilio has no events for transcripts or errors; the close says the call ended
    hangup: (reason) => close(...closeFor(reason)),
    ...(options.twilio && {
      transfer: ({ to, ringTimeoutMs }) =>
        callSid
          ? redirectTwilioCall(options.twilio!, callSid, to, ringTimeoutMs)
          : Promise.resolve({ ok: false, why: "the stream did not name its call" }),
    }),
  };

  async function onStart(event: TwilioEvent) {
    streamSid = event.start?.streamSid ?? event.streamSid ?? "";
    callSid = event.start?.callSid ?? "";
    try {
      const parameters = event.start?.customParameters ?? {};
      const assistant = options.assistant ?? (await options.authorize(parameters));
      if (!open) return;
      const handle = await options.startCall(assistant, transport, callVariablesOf(parameters));
      if (!handle) return close(...refusedByContext);
      call = handle;
      if (!open) handle.callerHangup(); // the stream stopped while call_context answered
    } catch (error) {
      if (isDatabaseUnavailable(error)) return close(...tryAgainLater);
      const message = error instanceof AppError ? error.message : "could not authorize the stream";
      log.warn("twilio stream refused", { status: error instanceof AppError ? error.status : 500, message });
      close(1008, message);
    }
  }

  return {
    onOpen: () => {},
    onMessage(message) {
      let event: TwilioEvent;
      try {
        event = JSON.parse(message.toString());
      } catch {
        return;
      }
      if (event.event === "start") void onStart(event);
      else if (event.event === "media" && event.media?.payload && (event.media.track ?? "inbound") === "inbound") {
        const ulaw = Buffer.from(event.media.payload, "base64");
        call?.callerAudio(muLawDecode(ulaw), ulaw); // the bytes go on as they came to a mu-law provider
      } else if (event.event === "stop") call?.callerHangup();
      // connected, mark (our marks played) and dtmf need no action
    },
    onClose() {
      open = false;
      call?.callerHangup();
    },
  };
}
