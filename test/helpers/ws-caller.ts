// A test caller that dials the bridge like a phone: it streams 20 ms frames in real time (silence when
// it has nothing to say) in our wire format or as Twilio Media Streams, and records what it hears.
import { request } from "node:http";
import WebSocket from "ws";
import { muLawDecode, muLawEncode } from "../../src/audio/g711";
import { bytesToPcm, concatPcm, pcmToBytes } from "../../src/audio/pcm";

export type Closed = { code: number; reason: string };
export type WireFormat = "native" | "twilio";

export class WsCaller {
  /** JSON messages from the bridge, in order. */
  readonly events: any[] = [];
  /** Agent audio frames as heard, PCM16 at the call's rate. */
  readonly frames: Int16Array[] = [];
  /** How many agent frames had been heard when each of `events` came (the socket keeps their order). */
  readonly framesBefore: number[] = [];
  /** How many frames of the caller's queued speech were still to be sent when each of `events` came. */
  readonly speechLeft: number[] = [];
  readonly closed: Promise<Closed>;
  private queue: Int16Array[] = [];
  private pump: ReturnType<typeof setInterval> | null = null;
  private waiters: (() => void)[] = [];
  private lastAudioAt = 0;
  private sequence = 0;
  /** the longest wait between two agent frames since `watchGaps()` (ms), and where it is measured from */
  private gaps: { since: number; longestMs: number } | null = null;

  constructor(
    readonly ws: WebSocket,
    readonly format: WireFormat,
    readonly sampleRate: number,
  ) {
    ws.binaryType = "nodebuffer";
    this.closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => {
        this.stopStreaming();
        resolve({ code, reason: reason.toString() });
      }),
    );
    ws.on("message", (data: Buffer, isBinary) => {
      if (isBinary) this.heard(bytesToPcm(data));
      else {
        const event = JSON.parse(data.toString());
        if (event.event === "media") this.heard(muLawDecode(Buffer.from(event.media.payload, "base64")));
        else {
          this.framesBefore.push(this.frames.length);
          this.speechLeft.push(this.queue.length);
          this.events.push(event);
        }
      }
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  get frameSamples() {
    return this.sampleRate / 50;
  }

  /** Starts sending one frame every 20 ms, like a phone: queued speech first, else silence. */
  startStreaming() {
    const started = performance.now();
    let sent = 0;
    this.pump = setInterval(() => {
      // catch up on timer lateness so the caller's clock stays real time
      while (sent * 20 <= performance.now() - started) {
        this.sendFrame(this.nextFrame());
        sent++;
      }
    }, 5);
  }

  stopStreaming() {
    if (this.pump) clearInterval(this.pump);
    this.pump = null;
  }

  /** Queues speech (at the call's rate) to be streamed in real time; resolves when it has been sent. */
  async say(samples: Int16Array) {
    for (let i = 0; i < samples.length; i += this.frameSamples) {
      const frame = new Int16Array(this.frameSamples);
      frame.set(samples.subarray(i, i + this.frameSamples));
      this.queue.push(frame);
    }
    while (this.queue.length > 0 && this.ws.readyState === WebSocket.OPEN) await Bun.sleep(20);
  }

  sendJson(message: object) {
    this.ws.send(JSON.stringify(message));
  }

  /** Resolves with the first JSON event matching, waiting for it if needed. */
  async waitFor(predicate: (event: any) => boolean, timeoutMs = 10_000): Promise<any> {
    return this.until(() => this.events.find(predicate), timeoutMs, "event");
  }

  /**
   * Waits for the agent's final transcript `text`, then for its audio to be played out (a realtime
   * provider's final comes once the reply has played; other transcripts run ahead of the paced audio).
   */
  async waitForAgentSaid(text: string, quietMs = 300, timeoutMs = 15_000) {
    await this.waitFor(
      (e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final && e.text.startsWith(text),
      timeoutMs,
    );
    await this.until(
      () => this.lastAudioAt > 0 && performance.now() - this.lastAudioAt >= quietMs,
      timeoutMs,
      "the agent's speech to end",
      50,
    );
  }

  /** Waits for agent audio to start from now on, then to stop for `quietMs`. */
  async waitForAgentAudio(quietMs = 300, timeoutMs = 15_000) {
    const after = performance.now();
    await this.until(
      () => this.lastAudioAt > after && performance.now() - this.lastAudioAt >= quietMs,
      timeoutMs,
      "agent speech then silence",
      50,
    );
  }

  heardAudio = () => concatPcm(this.frames);

  /** From now on, the longest silence between agent frames is kept (see `longestGapMs`). */
  watchGaps() {
    this.gaps = { since: performance.now(), longestMs: 0 };
  }

  /** The longest wait for agent audio since `watchGaps()`, the wait still under way included. */
  longestGapMs() {
    if (!this.gaps) return 0;
    const current = performance.now() - Math.max(this.lastAudioAt, this.gaps.since);
    return Math.max(this.gaps.longestMs, current);
  }

  private heard(frame: Int16Array) {
    const now = performance.now();
    if (this.gaps)
      this.gaps.longestMs = Math.max(this.gaps.longestMs, now - Math.max(this.lastAudioAt, this.gaps.since));
    this.frames.push(frame);
    this.lastAudioAt = now;
  }

  private nextFrame() {
    return this.queue.shift() ?? new Int16Array(this.frameSamples);
  }

  private sendFrame(frame: Int16Array) {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    if (this.format === "native") return this.ws.send(pcmToBytes(frame));
    const payload = Buffer.from(muLawEncode(frame)).toString("base64");
    this.sendJson({
      event: "media",
      sequenceNumber: String(++this.sequence),
      media: { track: "inbound", chunk: String(this.sequence), timestamp: String(this.sequence * 20), payload },
      streamSid: "MZtest",
    });
  }

  async until<T>(check: () => T | undefined | false, timeoutMs: number, what: string, pollMs?: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = check();
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no ${what} within ${timeoutMs} ms; events: ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs ?? 200);
        if (!pollMs)
          this.waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
      });
    }
  }
}

/** Dials our wire format (see `refusal` for a dial the bridge refuses). */
export function dialNative(bridgeUrl: string, query: Record<string, string>, headers: Record<string, string> = {}) {
  const url = `${bridgeUrl}/v1/calls?${new URLSearchParams(query)}`;
  return open(new WebSocket(url, { headers }), "native", Number(query.sampleRate ?? 16000));
}

/** Dials as Twilio does and sends `connected` and `start` (with custom parameters, if any). */
export async function dialTwilio(
  bridgeUrl: string,
  query: Record<string, string>,
  customParameters: Record<string, string> = {},
) {
  const caller = await open(new WebSocket(`${bridgeUrl}/v1/twilio?${new URLSearchParams(query)}`), "twilio", 8000);
  caller.sendJson({ event: "connected", protocol: "Call", version: "1.0.0" });
  caller.sendJson({
    event: "start",
    sequenceNumber: "1",
    start: {
      accountSid: "ACtest",
      streamSid: "MZtest",
      callSid: "CAtest",
      tracks: ["inbound"],
      mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
      customParameters,
    },
    streamSid: "MZtest",
  });
  return caller;
}

/** Dials like a websocket client and returns the HTTP answer when the bridge refuses the upgrade. */
export function refusal(
  bridgeUrl: string,
  path: string,
  query: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const url = `${bridgeUrl.replace(/^ws/, "http")}${path}?${new URLSearchParams(query)}`;
  const key = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  return new Promise<{ status: number; message: string } | "upgraded">((resolve, reject) => {
    const req = request(url, {
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": key,
        ...headers,
      },
    });
    req.on("upgrade", (_res, socket) => {
      socket.destroy();
      resolve("upgraded");
    });
    req.on("response", (res) => {
      if (res.statusCode === 101) {
        // Bun's client reports an upgrade here
        req.destroy();
        resolve("upgraded");
        return;
      }
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, message: JSON.parse(body).message }));
    });
    req.on("error", reject);
    req.end();
  });
}

function open(ws: WebSocket, format: WireFormat, sampleRate: number): Promise<WsCaller> {
  return new Promise((resolve, reject) => {
    // the listener is attached before the socket opens, so no early message is missed
    const caller = new WsCaller(ws, format, sampleRate);
    ws.once("open", () => resolve(caller));
    ws.once("error", reject);
  });
}
