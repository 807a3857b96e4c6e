// ElevenLabs' text-to-speech websocket (`stream-input`), one socket per utterance: an init message with
// the voice settings, then each sentence with `flush` so its audio starts at once, then "" to end.
// Audio comes back in the requested output_format with per-character alignment (times per chunk).
import { EventEmitter } from "node:events";
import { muLawDecode } from "../../audio/g711";
import { bytesToPcm } from "../../audio/pcm";
import type { VoiceSettings } from "./pipeline-settings";
import { closeCode, opened, providerSocket, socketError, textOf, isOpen } from "../provider-socket";

export type TtsOptions = {
  url: string;
  apiKey: string | null;
  voiceId: string;
  modelId: string;
  outputFormat: string;
  voiceSettings: VoiceSettings | null;
  /** Text was sent and no audio came back for this long: the provider is stuck. */
  stallMs: number;
};

export type Alignment = { chars: string[]; charStartTimesMs: number[] };

export type TtsEvents = {
  /** Audio as PCM16 at the output rate, with the characters it speaks when the provider says. */
  audio: [samples: Int16Array, alignment: Alignment | null];
  done: [];
  failed: [reason: string];
};

export function elevenLabsUrl({ url, voiceId, modelId, outputFormat }: TtsOptions): string {
  const target = new URL(`${url.replace(/\/$/, "")}/v1/text-to-speech/${encodeURIComponent(voiceId)}/stream-input`);
  target.searchParams.set("model_id", modelId);
  target.searchParams.set("output_format", outputFormat);
  // a socket opened ahead of its utterance may wait through a long caller turn
  target.searchParams.set("inactivity_timeout", "180");
  return target.toString();
}

export function initMessage(voiceSettings: VoiceSettings | null) {
  return { text: " ", ...(voiceSettings && { voice_settings: voiceSettings }) };
}

/** The fields of ElevenLabs' server messages this client reads. */
type ElevenLabsMessage = {
  audio?: string | null;
  isFinal?: boolean;
  is_final?: boolean;
  alignment?: Alignment | null;
  normalizedAlignment?: Alignment | null;
  error?: unknown;
  message?: unknown;
};

export class TtsStream extends EventEmitter<TtsEvents> {
  private finished = false;
  private stallTimer: ReturnType<typeof setTimeout> | null = null;

  private constructor(
    private readonly ws: WebSocket,
    private readonly decode: (bytes: Buffer) => Int16Array,
    private readonly stallMs: number,
  ) {
    super();
    ws.addEventListener("message", (event) => this.onMessage(textOf(event)));
    ws.addEventListener("close", (event) =>
      this.fail(`text-to-speech provider closed the stream (${closeCode(event)})`),
    );
    ws.addEventListener("error", (event) => this.fail(`text-to-speech provider: ${socketError(event)}`));
  }

  static async open(options: TtsOptions): Promise<TtsStream> {
    const ws = providerSocket(elevenLabsUrl(options), { ...(options.apiKey && { "xi-api-key": options.apiKey }) });
    await opened(ws, "text-to-speech provider");
    ws.send(JSON.stringify(initMessage(options.voiceSettings)));
    const decode = options.outputFormat === "ulaw_8000" ? (b: Buffer) => muLawDecode(b) : (b: Buffer) => bytesToPcm(b);
    return new TtsStream(ws, decode, options.stallMs);
  }

  get usable() {
    return !this.finished && isOpen(this.ws);
  }

  /** One sentence; generated at once (flush). */
  text(sentence: string) {
    this.send({ text: `${sentence.trim()} `, flush: true });
    this.watch();
  }

  /** No more text: the provider finishes the audio, then says isFinal. */
  end() {
    this.send({ text: "" });
    this.watch();
  }

  /** Stops at once (barge-in, call over); no events follow. */
  cancel() {
    this.finish();
    this.ws.terminate();
  }

  private send(message: object) {
    if (this.usable) this.ws.send(JSON.stringify(message));
  }

  private watch() {
    this.stallTimer ??= setTimeout(() => {
      this.fail(`text-to-speech provider sent no audio for ${this.stallMs} ms`);
      this.ws.terminate();
    }, this.stallMs);
  }

  private onMessage(raw: string) {
    if (this.finished) return;
    let message: ElevenLabsMessage;
    try {
      message = JSON.parse(raw);
    } catch {
      return this.fail("text-to-speech provider sent a message that is not JSON");
    }
    if (typeof message.audio === "string" && message.audio) {
      if (this.stallTimer) clearTimeout(this.stallTimer);
      this.stallTimer = null;
      const alignment = message.alignment ?? message.normalizedAlignment;
      const aligned =
        alignment && Array.isArray(alignment.chars) && Array.isArray(alignment.charStartTimesMs) ? alignment : null;
      this.emit("audio", this.decode(Buffer.from(message.audio, "base64")), aligned);
    }
    if (message.isFinal === true || message.is_final === true) {
      this.finish();
      this.ws.close(1000);
      this.emit("done");
    } else if (message.error || message.message) {
      this.fail(`text-to-speech provider: ${String(message.error ?? message.message).slice(0, 200)}`);
      this.ws.terminate();
    }
  }

  private fail(reason: string) {
    if (this.finished) return;
    this.finish();
    this.emit("failed", reason);
  }

  private finish() {
    this.finished = true;
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
  }
}
