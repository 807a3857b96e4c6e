// Deepgram's streaming speech-to-text over websocket (/v1/listen): the caller's speech goes in as it
// is heard (mu-law at 8 kHz, else linear16), `Finalize` when the VAD ends the turn, KeepAlive while
// nothing is sent; the finals of the turn, joined, are what the caller said.
import { openSttSocket, SttSocket } from "./stt-socket";

export type SttOptions = {
  url: string;
  apiKey: string | null;
  sampleRate: number;
  model: string;
  language: string | null;
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

export class DeepgramStt extends SttSocket {
  private finals: string[] = [];
  private interim = "";
  private lastSentAt = Date.now();
  private readonly keepAlive: ReturnType<typeof setInterval>;
  private finalizing: { resolve: (text: string) => void; timer: ReturnType<typeof setTimeout> } | null = null;

  static async connect(options: SttOptions): Promise<DeepgramStt> {
    return new DeepgramStt(await openSttSocket(deepgramUrl(options), options.apiKey), options.sampleRate);
  }

  private constructor(ws: WebSocket, sampleRate: number) {
    super(ws, sampleRate);
    this.keepAlive = setInterval(() => {
      if (Date.now() - this.lastSentAt >= keepAliveMs) this.control("KeepAlive");
    }, keepAliveMs / 2);
  }

  /** Ends the turn: resolves with everything said in it (what is known if the provider is slow). */
  finalize(): Promise<string> {
    this.settle();
    return new Promise((resolve) => {
      this.finalizing = { resolve, timer: setTimeout(() => this.settle(), finalizeTimeoutMs) };
      this.control("Finalize");
    });
  }

  protected sent() {
    this.lastSentAt = Date.now();
  }

  protected ended() {
    clearInterval(this.keepAlive);
    this.settle();
  }

  protected onMessage(message: DeepgramMessage) {
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
