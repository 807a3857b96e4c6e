// One stream of a local stand-in for Deepgram Flux (/v2/listen, served by the fake Deepgram server
// beside /v1/listen, as Deepgram's host serves both): raw audio in binary frames (mulaw or linear16),
// `Connected` first, then TurnInfo events along Flux's documented state machine
// (https://developers.deepgram.com/docs/flux/state): StartOfTurn when speech begins, an Update for
// every 250 ms of audio in a turn, EagerEndOfTurn (only with eager_eot_threshold) when a stretch of
// speech ends, TurnResumed when speech follows an EagerEndOfTurn, EndOfTurn with the EagerEndOfTurn's
// transcript. A script stands in for the model: each stretch of speech says the next scripted words,
// and the turn ends `confidentMs` after speech when its words end a sentence (. ? !), else after
// eot_timeout_ms of silence. It records everything it was sent.
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { muLawDecode } from "../../src/audio/g711";
import { bytesToPcm, rms } from "../../src/audio/pcm";

export type FakeFluxOptions = {
  /** silence that ends a stretch of speech (the fake's own VAD); default 200 ms */
  stretchEndMs?: number;
  /** silence after a stretch that ends a sentence before EndOfTurn; default 300 ms */
  confidentMs?: number;
};

type State = "Initial" | "TurnOngoing" | "AwaitingEnd";

export class FakeFluxStream {
  readonly query: URLSearchParams;
  /** TurnInfo events sent, in order. */
  readonly sent: { event: string; transcript: string }[] = [];
  /** Control messages (CloseStream, …), in order. */
  readonly control: { type: string }[] = [];
  closedByClient = false;
  private sequence = 0;
  private state: State = "Initial";
  private turnIndex = 0;
  private stretches: string[] = [];
  private speaking = false;
  private silentMs = 0;
  private streamMs = 0;
  private turnStartMs = 0;
  private sinceUpdateMs = 0;

  constructor(
    readonly ws: WebSocket,
    readonly request: { url: string; headers: IncomingMessage["headers"] },
    /** the words of the next stretch of speech */
    private readonly next: () => string,
    private readonly options: FakeFluxOptions,
  ) {
    this.query = new URL(request.url, "ws://x").searchParams;
    ws.on("message", (data: Buffer, isBinary) =>
      isBinary ? this.onAudio(data) : this.onControl(JSON.parse(data.toString())),
    );
    ws.on("close", () => (this.closedByClient = true));
    this.send({ type: "Connected", request_id: "fake-flux-request", sequence_id: this.sequence++ });
  }

  get sampleRate() {
    return Number(this.query.get("sample_rate"));
  }

  private get eager() {
    return this.query.has("eager_eot_threshold");
  }

  private get transcript() {
    return this.stretches.join(" ");
  }

  private onAudio(data: Buffer) {
    const encoding = this.query.get("encoding");
    const pcm = encoding === "mulaw" ? muLawDecode(data) : encoding === "linear16" ? bytesToPcm(data) : null;
    if (!pcm) return this.ws.close(1008, `unsupported encoding ${encoding}`);
    const ms = (pcm.length * 1000) / this.sampleRate;
    this.streamMs += ms;
    if (rms(pcm) > 300) this.onSpeech();
    else this.onSilence(ms);
    if (this.state === "Initial") return;
    this.sinceUpdateMs += ms;
    if (this.sinceUpdateMs >= 250 && this.state === "TurnOngoing") {
      this.sinceUpdateMs = 0;
      this.turnInfo("Update");
    }
  }

  private onSpeech() {
    this.silentMs = 0;
    if (this.speaking) return;
    this.speaking = true;
    if (this.state === "Initial") {
      this.state = "TurnOngoing";
      this.turnStartMs = this.streamMs;
      this.turnInfo("StartOfTurn");
    } else if (this.state === "AwaitingEnd") {
      this.state = "TurnOngoing";
      this.turnInfo("TurnResumed");
    }
  }

  private onSilence(ms: number) {
    if (this.state === "Initial") return;
    this.silentMs += ms;
    if (this.speaking && this.silentMs >= (this.options.stretchEndMs ?? 200)) {
      this.speaking = false;
      const words = this.next().trim();
      if (words) this.stretches.push(words);
      if (this.eager && this.transcript) {
        this.state = "AwaitingEnd";
        this.turnInfo("EagerEndOfTurn");
      }
      return;
    }
    if (this.speaking) return;
    const complete = /[.?!]$/.test(this.transcript);
    const timeoutMs = Number(this.query.get("eot_timeout_ms") ?? 5000);
    const needed = complete ? (this.options.confidentMs ?? 300) : timeoutMs;
    if (this.silentMs >= needed) this.endTurn();
  }

  private endTurn() {
    this.turnInfo("EndOfTurn");
    this.state = "Initial";
    this.turnIndex++;
    this.stretches = [];
    this.sinceUpdateMs = 0;
  }

  private turnInfo(event: string) {
    const transcript = event === "StartOfTurn" ? "" : this.transcript;
    this.sent.push({ event, transcript });
    const words = transcript.split(/\s+/).filter(Boolean);
    this.send({
      type: "TurnInfo",
      request_id: "fake-flux-request",
      sequence_id: this.sequence++,
      event,
      turn_index: this.turnIndex,
      audio_window_start: this.turnStartMs / 1000,
      audio_window_end: this.streamMs / 1000,
      transcript,
      words: words.map((word) => ({ word, confidence: 0.98 })),
      end_of_turn_confidence: event === "EndOfTurn" ? 0.9 : event === "EagerEndOfTurn" ? 0.6 : 0.1,
    });
  }

  private onControl(message: { type: string }) {
    this.control.push(message);
    if (message.type === "CloseStream") this.ws.close(1000);
  }

  private send(message: object) {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }
}
