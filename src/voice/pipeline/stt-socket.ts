// What Deepgram's two streaming protocols share (/v1/listen, deepgram-stt.ts; Flux's /v2/listen,
// deepgram-flux.ts): the websocket with its Token header, caller audio as mu-law at 8 kHz (else
// linear16), JSON control messages, CloseStream at the end, and a provider that closes the stream
// reported once as `closed` with its code.
import { EventEmitter } from "node:events";
import { muLawEncode } from "../../audio/g711";
import { pcmToBytes } from "../../audio/pcm";
import { log } from "../../log";
import type { ProviderTurnEvent } from "../turn-taking/endpointing";
import { closeCode, opened, providerSocket, socketError, isOpen } from "../provider-socket";

export type SttEvents = {
  /** Text so far of the current turn (finals plus the latest interim). */
  interim: [text: string];
  /** A provider that decides the turns (Flux): where its turn stands. */
  turn: [event: ProviderTurnEvent];
  closed: [reason: string];
};

/** The socket to `url`, once open (rejects with the provider's refusal or a time-out). */
export async function openSttSocket(url: string, apiKey: string | null): Promise<WebSocket> {
  const ws = providerSocket(url, { ...(apiKey && { Authorization: `Token ${apiKey}` }) });
  await opened(ws, "speech-to-text provider");
  return ws;
}

export abstract class SttSocket extends EventEmitter<SttEvents> {
  protected closing = false;

  protected constructor(
    protected readonly ws: WebSocket,
    private readonly sampleRate: number,
  ) {
    super();
    ws.addEventListener("message", (event) => typeof event.data === "string" && this.received(event.data));
    ws.addEventListener("close", (event) => {
      this.ended();
      if (!this.closing) this.emit("closed", `speech-to-text provider closed the stream (${closeCode(event)})`);
    });
    ws.addEventListener("error", (event) => log.warn("speech-to-text stream error", { error: socketError(event) }));
  }

  /** A server message, parsed. */
  protected abstract onMessage(message: Record<string, unknown>): void;

  /** The stream is over (closed by either side): timers stop, waiters get what is known. */
  protected abstract ended(): void;

  send(samples: Int16Array) {
    if (!isOpen(this.ws)) return;
    this.ws.send(this.sampleRate === 8000 ? muLawEncode(samples) : pcmToBytes(samples));
    this.sent();
  }

  close() {
    if (this.closing) return;
    this.closing = true;
    this.ended();
    this.control("CloseStream");
    // CloseStream asks the provider to close; don't wait on it for long
    setTimeout(() => this.ws.terminate(), 1_000).unref?.();
  }

  /** Something went to the provider (a KeepAlive is due that much later). */
  protected sent() {}

  protected control(type: string) {
    if (!isOpen(this.ws)) return;
    this.ws.send(JSON.stringify({ type }));
    this.sent();
  }

  private received(raw: string) {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(raw);
    } catch {
      return log.warn("speech-to-text provider sent a message that is not JSON");
    }
    this.onMessage(message);
  }
}
