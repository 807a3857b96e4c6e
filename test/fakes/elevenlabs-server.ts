// A local stand-in for ElevenLabs' text-to-speech websocket (`/v1/text-to-speech/{voice_id}/stream-input`):
// JSON messages in (init with voice_settings, text ending in a space, flush, "" to end), real speech
// out (espeak-ng, in the requested output_format) as base64 audio with per-character alignment, then
// {"isFinal": true}. It records every connection's URL, headers and messages.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { muLawEncode } from "../../src/audio/g711";
import { pcmToBytes } from "../../src/audio/pcm";
import { speech } from "../helpers/speech";
import { wallClock } from "./wall-clock";

export type ElevenLabsMode = "ok" | "refuse" | "stall";
export type FakeElevenLabsOptions = {
  /** The key the xi-api-key header must carry; any when left out. */
  apiKey?: string;
  /** Audio per message. */
  chunkMs?: number;
  /** Wait before the first audio of each generation (a model's time to first byte). */
  firstAudioDelayMs?: number;
  /** What is spoken for a text (default: the text); a bench speaks one cached sentence for texts that are all new. */
  speakAs?: (text: string) => string;
};

type Message = { text?: string; flush?: boolean; voice_settings?: Record<string, unknown>; [key: string]: unknown };
/** When a text message arrived and when the first audio for it went out (wallClock), for benches. */
export type TtsTiming = { text: string; receivedAt: number; firstAudioAt: number | null };

const formats: Record<string, { rate: number; encode: (pcm: Int16Array) => Uint8Array }> = {
  ulaw_8000: { rate: 8000, encode: muLawEncode },
  ...Object.fromEntries(
    [8000, 16000, 22050, 24000, 44100].map((rate) => [`pcm_${rate}`, { rate, encode: pcmToBytes }]),
  ),
};

export class FakeElevenLabsStream {
  readonly voiceId: string;
  readonly query: URLSearchParams;
  readonly messages: Message[] = [];
  /** Text that was turned into audio, in order. */
  readonly spoken: string[] = [];
  readonly timings: TtsTiming[] = [];
  closedByClient = false;
  private buffer = "";
  private work: Promise<void> = Promise.resolve();

  constructor(
    readonly ws: WebSocket,
    readonly request: { url: string; headers: IncomingMessage["headers"] },
    private readonly options: FakeElevenLabsOptions,
    private readonly stalled: boolean,
  ) {
    const url = new URL(request.url, "ws://x");
    this.voiceId = decodeURIComponent(url.pathname.split("/")[3] ?? "");
    this.query = url.searchParams;
    ws.on("message", (data) => this.onMessage(JSON.parse(data.toString())));
    ws.on("close", () => (this.closedByClient = true));
  }

  get init(): Message | undefined {
    return this.messages[0];
  }

  drop() {
    this.ws.terminate();
  }

  private onMessage(message: Message) {
    this.messages.push(message);
    if (message.text?.trim()) this.timings.push({ text: message.text, receivedAt: wallClock(), firstAudioAt: null });
    if (this.messages.length === 1) return; // init: settings only, its text is one space
    if (message.text === "") {
      this.generate(this.buffer);
      this.buffer = "";
      this.work = this.work.then(() => {
        if (!this.stalled) this.send({ audio: null, isFinal: true, normalizedAlignment: null, alignment: null });
      });
      return;
    }
    this.buffer += message.text ?? "";
    if (message.flush) {
      this.generate(this.buffer);
      this.buffer = "";
    }
  }

  private generate(text: string) {
    if (!text.trim()) return;
    this.work = this.work.then(async () => {
      const format = formats[this.query.get("output_format") ?? ""];
      if (!format) return void this.ws.close(1008, "unsupported output_format");
      if (this.stalled || this.ws.readyState !== this.ws.OPEN) return;
      if (this.options.firstAudioDelayMs) await Bun.sleep(this.options.firstAudioDelayMs);
      this.spoken.push(text.trim());
      const pcm = await speech((this.options.speakAs?.(text) ?? text).trim(), format.rate);
      const chunk = Math.round(((this.options.chunkMs ?? 200) * format.rate) / 1000);
      const msPerChar = (pcm.length * 1000) / format.rate / text.length;
      const timing = this.timings.find((t) => t.firstAudioAt === null && text.includes(t.text.trim()));
      if (timing) timing.firstAudioAt = wallClock();
      for (let start = 0; start < pcm.length; start += chunk) {
        const samples = pcm.subarray(start, start + chunk);
        const chunkStartMs = (start * 1000) / format.rate;
        const chunkEndMs = ((start + samples.length) * 1000) / format.rate;
        // the characters whose (evenly spread) start falls in this chunk, timed from the chunk's start
        const chars = [...text]
          .map((c, i) => ({ c, at: i * msPerChar }))
          .filter((x) => x.at >= chunkStartMs && x.at < chunkEndMs);
        const alignment = {
          chars: chars.map((x) => x.c),
          charStartTimesMs: chars.map((x) => Math.round(x.at - chunkStartMs)),
          charsDurationsMs: chars.map(() => Math.round(msPerChar)),
        };
        this.send({
          audio: Buffer.from(format.encode(samples)).toString("base64"),
          isFinal: false,
          normalizedAlignment: alignment,
          alignment,
        });
      }
    });
  }

  private send(message: object) {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }
}

export type FakeElevenLabsServer = {
  /** Base URL to use as ELEVENLABS_URL. */
  url: string;
  streams: FakeElevenLabsStream[];
  /** refuse: 401 at the upgrade; stall: accept and never send audio (a stream's drop() cuts it). */
  mode: ElevenLabsMode;
  close(): Promise<void>;
};

export async function startFakeElevenLabs(options: FakeElevenLabsOptions = {}): Promise<FakeElevenLabsServer> {
  const http = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  const fake: FakeElevenLabsServer = {
    url: "",
    streams: [],
    mode: "ok",
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
  http.on("upgrade", (req, socket, head) => {
    const authorized = !options.apiKey || req.headers["xi-api-key"] === options.apiKey;
    const path = /^\/v1\/text-to-speech\/[^/]+\/stream-input(\?|$)/.test(req.url ?? "");
    if (fake.mode === "refuse" || !authorized || !path) {
      socket.end(
        'HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"detail":{"status":"invalid_api_key"}}',
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      fake.streams.push(
        new FakeElevenLabsStream(ws, { url: req.url ?? "/", headers: req.headers }, options, fake.mode === "stall"),
      );
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  fake.url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return fake;
}
