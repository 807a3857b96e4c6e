// Deepgram's streaming speech-to-text over websocket (/v1/listen): the caller's speech goes in as it
// is heard (mu-law at 8 kHz, else linear16), `Finalize` when the VAD ends the turn, KeepAlive while
// nothing is sent; the finals of the turn, joined, are what the caller said.
import { EventEmitter } from "node:events";
import WebSocket from "ws";
import { muLawEncode } from "../../audio/g711";
import { pcmToBytes } from "../../audio/pcm";
import { log } from "../../log";
import { opened } from "./ws-open";

export type SttOptions = {
  url: string;
  apiKey: string | null;
  sampleRate: number;
  model: string;
  language: string | null;
};

export type SttEvents = {
  /** Text so far of the current turn (finals plus the latest interim). */
  interim: [text: string];
  closed: [reason: string];
};

const keepAliveMs = 4_000; // Deepgram closes after 10 s without audio or a KeepAlive
const finalizeTimeoutMs = 2_500;

export function deepgramUrl({ url, sampleRate, model, language }: SttOptions): string {
  const target = new URL(url);
  const query: Record<string, string> = {
    model,
    encoding: sampleRate === 8000 ? "mulaw" : "linear16",
    sample_rate: String(sampleRate),
    channels: "1",
    interim_results: "true",
    smart_format: "true",
    ...(language && { language }),
  };
  for (const [key, value] of Object.entries(query)) target.searchParams.set(key, value);
  return target.toString();
}

/** The fields of Deepgram's server messages this client reads. */
type DeepgramMessage = {
  type?: string;
  is_final?: boolean;
  from_finalize?: boolean;
  channel?: { alternatives?: { transcript?: string }[] };
};

export class DeepgramStt extends EventEmitter<SttEvents> {
  private finals: string[] = [];
  private interim = "";
  private lastSentAt = Date.now();
  private readonly keepAlive: ReturnType<typeof setInterval>;
  private finalizing: { resolve: (text: string) => void; timer: ReturnType<typeof setTimeout> } | null = null;
  private closing = false;

  private constructor(
    private readonly ws: WebSocket,
    private readonly sampleRate: number,
  ) {
    super();
    ws.on("message", (data, isBinary) => !isBinary && this.onMessage(data.toString()));
    ws.on("close", (code, reason) => {
      clearInterval(this.keepAlive);
      this.settle();
      if (!this.closing)
        this.emit(
          "closed",
          `speech-to-text provider closed the stream (code ${code}${reason.length ? `: ${reason}` : ""})`,
        );
    });
    ws.on("error", (error) => log.warn("speech-to-text stream error", { error: error.message }));
    this.keepAlive = setInterval(() => {
      if (Date.now() - this.lastSentAt >= keepAliveMs) this.control("KeepAlive");
    }, keepAliveMs / 2);
  }

  static connect(options: SttOptions): Promise<DeepgramStt> {
    const ws = new WebSocket(deepgramUrl(options), {
      headers: { ...(options.apiKey && { Authorization: `Token ${options.apiKey}` }) },
    });
    return opened(ws, "speech-to-text provider").then(() => new DeepgramStt(ws, options.sampleRate));
  }

  send(samples: Int16Array) {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(this.sampleRate === 8000 ? muLawEncode(samples) : pcmToBytes(samples));
    this.lastSentAt = Date.now();
  }

  /** Ends the turn: resolves with everything said in it (what is known if the provider is slow). */
  finalize(): Promise<string> {
    this.settle();
    return new Promise((resolve) => {
      this.finalizing = { resolve, timer: setTimeout(() => this.settle(), finalizeTimeoutMs) };
      this.control("Finalize");
    });
  }

  close() {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.keepAlive);
    this.settle();
    this.control("CloseStream");
    // CloseStream asks the provider to close; don't wait on it for long
    setTimeout(() => this.ws.terminate(), 1_000).unref?.();
  }

  private control(type: string) {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify({ type }));
    this.lastSentAt = Date.now();
  }

  private onMessage(raw: string) {
    let message: DeepgramMessage;
    try {
      message = JSON.parse(raw);
    } catch {
      return log.warn("speech-to-text provider sent a message that is not JSON");
    }
    if (message.type !== "Results") return;
    const text: string = message.channel?.alternatives?.[0]?.transcript ?? "";
    if (message.is_final) {
      if (text.trim()) this.finals.push(text.trim());
      this.interim = "";
    } else this.interim = text.trim();
    const soFar = this.soFar();
    if (soFar) this.emit("interim", soFar);
    if (message.from_finalize) this.settle();
  }

  private soFar() {
    return [...this.finals, this.interim].filter(Boolean).join(" ");
  }

  /** Hands the turn's text to whoever waits for it and starts the next turn. */
  private settle() {
    const waiting = this.finalizing;
    if (!waiting) return;
    this.finalizing = null;
    clearTimeout(waiting.timer);
    const text = this.soFar();
    this.finals = [];
    this.interim = "";
    waiting.resolve(text);
  }
}
