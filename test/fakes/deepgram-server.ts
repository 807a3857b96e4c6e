// A local stand-in for Deepgram's streaming /v1/listen websocket: raw audio in binary frames (mulaw or
// linear16, as the query says), JSON control messages (KeepAlive, Finalize, CloseStream), and a script
// instead of a model: once it has heard speech followed by silence (or is asked to Finalize), the next
// scripted transcript comes back as Results (is_final). With interimWordMs, a stream that asked for
// interim_results=true also gets interim Results (is_final false) while the caller speaks, the scripted
// words so far. It records everything it was sent. /v2/listen on the same host speaks Flux
// (deepgram-flux-stream.ts), each stretch of speech taking the next transcript.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { muLawDecode } from "../../src/audio/g711";
import { bytesToPcm, rms } from "../../src/audio/pcm";
import { FakeFluxStream, type FakeFluxOptions } from "./deepgram-flux-stream";
import { wallClock } from "./wall-clock";

export type DeepgramMode = "ok" | "refuse" | "stall";

export type FakeDeepgramOptions = {
  /** What callers say, in order; each heard utterance takes the next (then "" when they run out). */
  transcripts?: string[];
  /** The key the Authorization header must carry (`Token <key>`); any when left out. */
  apiKey?: string;
  /** Silence after speech that ends an utterance on the fake's own, like Deepgram's endpointing. */
  endpointingMs?: number;
  /**
   * What the caller of the n-th stream (either protocol, counted together) says in its turn-th
   * utterance (a Flux stream's turn-th stretch of speech), instead of `transcripts`.
   */
  transcript?: (stream: number, turn: number) => string;
  /** How the Flux streams (/v2/listen) decide their turns. */
  flux?: FakeFluxOptions;
  /**
   * Interim results for the streams that ask for them (interim_results=true): while the caller speaks,
   * one more of the utterance's scripted words every interimWordMs from its first sound (Deepgram
   * revises interims at its own pace; left out, only finals come, as before).
   */
  interimWordMs?: number;
};

export class FakeDeepgramStream {
  readonly query: URLSearchParams;
  /** Control messages, in order, with when they arrived (wallClock). */
  readonly control: { type: string; at: number }[] = [];
  /** The audio received, decoded to PCM16 at the stream's rate. */
  readonly audio: Int16Array[] = [];
  /** The stream's number among all opened, Flux's too (the `stream` of `transcript`). */
  index = 0;
  audioBytes = 0;
  closedByClient = false;
  private heardSpeech = false;
  private silentMs = 0;
  private streamMs = 0;
  /** the utterance under way: its scripted transcript (taken at its first interim), where it began, words sent */
  private utterance: { transcript: string | null; startMs: number; interimWords: number } | null = null;

  constructor(
    readonly ws: WebSocket,
    readonly request: { url: string; headers: IncomingMessage["headers"] },
    private readonly next: () => string,
    private readonly options: FakeDeepgramOptions,
    private readonly stalled: boolean,
  ) {
    this.query = new URL(request.url, "ws://x").searchParams;
    ws.on("message", (data: Buffer, isBinary) =>
      isBinary ? this.onAudio(data) : this.onControl(JSON.parse(data.toString())),
    );
    ws.on("close", () => (this.closedByClient = true));
  }

  get sampleRate() {
    return Number(this.query.get("sample_rate"));
  }

  /** Cuts the connection without a close frame, like a crashed provider. */
  drop() {
    this.ws.terminate();
  }

  private onAudio(data: Buffer) {
    this.audioBytes += data.length;
    const encoding = this.query.get("encoding");
    const pcm = encoding === "mulaw" ? muLawDecode(data) : encoding === "linear16" ? bytesToPcm(data) : null;
    if (!pcm) return this.ws.close(1008, `unsupported encoding ${encoding}`);
    this.audio.push(pcm);
    const ms = (pcm.length * 1000) / this.sampleRate;
    this.streamMs += ms;
    if (rms(pcm) > 300) {
      this.heardSpeech = true;
      this.silentMs = 0;
      this.utterance ??= { transcript: null, startMs: this.streamMs - ms, interimWords: 0 };
      this.interim();
    } else if (this.heardSpeech) {
      this.silentMs += ms;
      if (this.options.endpointingMs !== undefined && this.silentMs >= this.options.endpointingMs) this.result(false);
    }
  }

  private onControl(message: { type: string }) {
    this.control.push({ ...message, at: wallClock() });
    if (message.type === "Finalize") this.result(true);
    if (message.type === "CloseStream") {
      this.send({ type: "Metadata", request_id: "fake-request", duration: this.streamMs / 1000, channels: 1 });
      this.ws.close(1000);
    }
  }

  /** The utterance's words so far as an interim result, when one more is due (interimWordMs). */
  private interim() {
    const wordMs = this.options.interimWordMs;
    const utterance = this.utterance!;
    if (wordMs === undefined || this.query.get("interim_results") !== "true") return;
    utterance.transcript ??= this.next();
    const words = utterance.transcript.split(/\s+/).filter(Boolean);
    const due = Math.min(words.length, Math.floor((this.streamMs - utterance.startMs) / wordMs));
    if (due <= utterance.interimWords) return;
    utterance.interimWords = due;
    this.sendResults(words.slice(0, due).join(" "), { start: utterance.startMs / 1000, isFinal: false });
  }

  /** The utterance heard so far, as a final result (from_finalize when asked for). */
  private result(fromFinalize: boolean) {
    const transcript = this.heardSpeech ? (this.utterance?.transcript ?? this.next()) : "";
    this.heardSpeech = false;
    this.silentMs = 0;
    this.utterance = null;
    this.sendResults(transcript, { start: Math.max(0, this.streamMs / 1000 - 1), isFinal: true, fromFinalize });
  }

  /** Results (Deepgram's shape), its words 0.3 s apart; a final one is also speech_final. */
  private sendResults(transcript: string, at: { start: number; isFinal: boolean; fromFinalize?: boolean }) {
    const words = transcript.split(/\s+/).filter(Boolean);
    this.send({
      type: "Results",
      channel_index: [0, 1],
      duration: Math.max(0, this.streamMs / 1000 - at.start),
      start: at.start,
      is_final: at.isFinal,
      speech_final: at.isFinal,
      ...(at.fromFinalize && { from_finalize: true }),
      channel: {
        alternatives: [
          {
            transcript,
            confidence: transcript ? 0.98 : 0,
            words: words.map((w, i) => ({
              word: w.toLowerCase().replace(/[^a-z0-9']/g, ""),
              start: i * 0.3,
              end: i * 0.3 + 0.25,
              confidence: 0.98,
              punctuated_word: w,
            })),
          },
        ],
      },
      metadata: {
        request_id: "fake-request",
        model_info: { name: "fake", version: "1", arch: "fake" },
        model_uuid: "fake",
      },
    });
  }

  private send(message: object) {
    if (!this.stalled && this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }
}

export type FakeDeepgramServer = {
  /** ws:// URL to use as DEEPGRAM_URL. */
  url: string;
  streams: FakeDeepgramStream[];
  /** The Flux streams (/v2/listen), in order. */
  fluxStreams: FakeFluxStream[];
  /** refuse: 401 at the upgrade; stall: accept, never answer (a stream's drop() cuts it). */
  mode: DeepgramMode;
  transcripts: string[];
  nextStream(): Promise<FakeDeepgramStream>;
  close(): Promise<void>;
};

export async function startFakeDeepgram(options: FakeDeepgramOptions = {}): Promise<FakeDeepgramServer> {
  const http = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  const waiting: ((s: FakeDeepgramStream) => void)[] = [];
  let taken = 0;
  let opened = 0;
  const fake: FakeDeepgramServer = {
    url: "",
    streams: [],
    fluxStreams: [],
    mode: "ok",
    transcripts: [...(options.transcripts ?? [])],
    nextStream: () =>
      taken < fake.streams.length ? Promise.resolve(fake.streams[taken++]!) : new Promise((r) => waiting.push(r)),
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
  http.on("upgrade", (req, socket, head) => {
    const authorized = !options.apiKey || req.headers.authorization === `Token ${options.apiKey}`;
    const flux = req.url?.startsWith("/v2/listen");
    if (fake.mode === "refuse" || !authorized || !(flux || req.url?.startsWith("/v1/listen"))) {
      socket.end(
        'HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"err_code":"INVALID_AUTH"}',
      );
      return;
    }
    const index = opened++;
    let turn = 0;
    const next = () => (options.transcript ? options.transcript(index, turn++) : (fake.transcripts.shift() ?? ""));
    if (flux)
      return wss.handleUpgrade(req, socket, head, (ws) => {
        const request = { url: req.url ?? "/", headers: req.headers };
        fake.fluxStreams.push(new FakeFluxStream(ws, request, next, options.flux ?? {}));
      });
    wss.handleUpgrade(req, socket, head, (ws) => {
      const stream = new FakeDeepgramStream(
        ws,
        { url: req.url ?? "/", headers: req.headers },
        next,
        options,
        fake.mode === "stall",
      );
      stream.index = index;
      fake.streams.push(stream);
      const waiter = waiting.shift();
      if (waiter) {
        taken++;
        waiter(stream);
      }
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  fake.url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/v1/listen`;
  return fake;
}
