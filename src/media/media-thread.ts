// The bridge's media thread: every SIP call's RTP of this process (sockets, reordering, digits, RTCP,
// the paced sender) runs on a thread with its own event loop and heap (media-thread-worker.ts), so SIP
// parsing, database round trips, provider websockets, call start-ups and this heap's collections do not
// delay a packet. Only audio crosses, batched: the agent frames handed over in one turn of this event
// loop go as one message (flushed before any control message, so a barge-in's clear follows the frames
// before it); the caller payloads of one run of the thread's 2 ms ticker come back as one message.
import { log } from "../log";
import { recordPacingDelay } from "../metrics/metrics";
import {
  deliverPayload,
  noStats,
  type CallMedia,
  type MediaHandlers,
  type MediaOptions,
  type MediaStats,
  type MediaTarget,
  type OpenMedia,
} from "./call-media";
import { codecs, frameSamples } from "./codecs";
import type { FromMediaThread, ToMediaThread } from "./media-thread-worker";
import { PortsExhausted } from "./port-pool";
import type { CallerQuality } from "./rtcp-reporter";

export type MediaThreadOptions = {
  portMin: number;
  portMax: number;
  hostname: string;
  /** how far ahead of their play time agent frames go to the thread: this loop's stalls it hides */
  leadMs: number;
  /** OUTBOUND_ALLOW_CIDRS: the thread's RTP and RTCP latch only to addresses the outbound guard allows */
  allowCidrs: string[];
};

export type MediaThread = { open: OpenMedia; stop(): Promise<void> };

export function startMediaThread(options: MediaThreadOptions): MediaThread {
  let worker: Worker | null = null;
  let nextId = 0;
  const sessions = new Map<number, RemoteMedia>();
  const opening = new Map<number, { resolve: (port: number) => void; reject: (error: Error) => void }>();
  const closing = new Map<number, (stats: MediaStats) => void>();

  // agent frames of this turn
  let frameIds: number[] = [];
  let frames = new Int16Array(64 * frameSamples);
  let flushQueued = false;

  const flushFrames = () => {
    flushQueued = false;
    if (frameIds.length === 0) return;
    // (no thread: it died with the calls these frames are for)
    worker?.postMessage({
      t: "frames",
      ids: Int32Array.from(frameIds),
      pcm: frames.slice(0, frameIds.length * frameSamples),
    } satisfies ToMediaThread);
    frameIds = [];
  };

  const post = (message: ToMediaThread) => {
    flushFrames();
    thread().postMessage(message);
  };

  const queueFrame = (id: number, frame: Int16Array) => {
    const at = frameIds.length * frameSamples;
    if (at + frameSamples > frames.length) {
      const grown = new Int16Array(frames.length * 2);
      grown.set(frames);
      frames = grown;
    }
    frames.set(frame, at); // a SIP call's frames are 20 ms at 8 kHz
    frameIds.push(id);
    if (!flushQueued) {
      flushQueued = true;
      queueMicrotask(flushFrames);
    }
  };

  const receive = (message: FromMediaThread) => {
    switch (message.t) {
      case "audio": {
        const { ids, payloadTypes, ends, bytes } = message;
        for (let i = 0; i < ids.length; i++) {
          const session = sessions.get(ids[i]!);
          const codec = codecs.find((c) => c.payloadType === payloadTypes[i]);
          if (session && codec)
            deliverPayload(session.handlers, bytes.subarray(i === 0 ? 0 : ends[i - 1], ends[i]), codec);
        }
        return;
      }
      case "pacing":
        for (const ms of message.delays) recordPacingDelay(ms, "media");
        return;
      case "opened":
      case "failed": {
        const waiter = opening.get(message.id);
        opening.delete(message.id);
        if (message.t === "opened") waiter?.resolve(message.port);
        else
          waiter?.reject(
            message.exhausted ? new PortsExhausted(options.portMin, options.portMax) : new Error(message.error),
          );
        return;
      }
      case "configured":
        sessions.get(message.id)?.configured.shift()?.();
        return;
      case "digit":
        sessions.get(message.id)?.handlers.onDigit(message.digit);
        return;
      case "timeout":
        sessions.get(message.id)?.handlers.onTimeout();
        return;
      case "quality": {
        const session = sessions.get(message.id);
        if (session) session.callerQuality = message.quality;
        return;
      }
      case "closed":
        closing.get(message.id)?.(message.stats);
        closing.delete(message.id);
        return;
    }
  };

  function thread(): Worker {
    if (worker) return worker;
    const started = new Worker(new URL("./media-thread-worker.ts", import.meta.url));
    started.onmessage = ({ data }: MessageEvent<FromMediaThread>) => receive(data);
    started.onerror = (event) => {
      // the calls' media died with it: they end (as a media time-out would end them); new calls get a new thread
      log.error("media thread failed", { error: event.message, calls: sessions.size });
      started.terminate(); // its sockets go with it
      worker = null;
      for (const waiter of opening.values()) waiter.reject(new Error(`the media thread failed: ${event.message}`));
      opening.clear();
      for (const done of closing.values()) done(noStats);
      closing.clear();
      for (const session of sessions.values()) {
        session.settleConfigures();
        session.handlers.onTimeout();
      }
    };
    const { portMin, portMax, hostname, allowCidrs } = options;
    started.postMessage({ t: "init", portMin, portMax, hostname, allowCidrs } satisfies ToMediaThread);
    worker = started;
    return started;
  }

  class RemoteMedia implements CallMedia {
    callerQuality: CallerQuality | null = null;
    readonly leadMs = options.leadMs;
    /** who waits for the thread to have applied each configure, in order */
    readonly configured: (() => void)[] = [];
    private closed: Promise<MediaStats> | null = null;

    constructor(
      readonly id: number,
      readonly port: number,
      readonly handlers: MediaHandlers,
    ) {}

    configure(target: MediaTarget) {
      return new Promise<void>((resolve) => {
        this.configured.push(resolve);
        post({ t: "configure", id: this.id, target: { ...target, codec: target.codec.name } });
      });
    }

    start() {
      post({ t: "start", id: this.id });
    }

    playAudio(frame: Int16Array) {
      if (!this.closed) queueFrame(this.id, frame);
    }

    clearAudio() {
      post({ t: "clear", id: this.id });
    }

    pauseAudio() {
      post({ t: "pause", id: this.id });
    }

    resumeAudio() {
      post({ t: "resume", id: this.id });
    }

    relay(peer: CallMedia) {
      if (!(peer instanceof RemoteMedia)) throw new Error("a relay joins two RTP sessions of one media thread");
      post({ t: "relay", id: this.id, peer: peer.id });
    }

    /** No answer will come (closed, or the thread died): whoever waits goes on. */
    settleConfigures() {
      for (const resolve of this.configured.splice(0)) resolve();
    }

    close(): Promise<MediaStats> {
      this.closed ??= new Promise<MediaStats>((resolve) => {
        this.settleConfigures();
        sessions.delete(this.id);
        if (!worker) return resolve(noStats);
        closing.set(this.id, resolve);
        post({ t: "close", id: this.id });
      });
      return this.closed;
    }
  }

  return {
    async open(handlers: MediaHandlers, media: MediaOptions) {
      const id = ++nextId;
      const port = await new Promise<number>((resolve, reject) => {
        opening.set(id, { resolve, reject });
        post({ t: "open", id, timeoutMs: media.timeoutMs, rtcpIntervalMs: media.rtcpIntervalMs });
      });
      const session = new RemoteMedia(id, port, handlers);
      sessions.set(id, session);
      return session;
    },
    async stop() {
      await Promise.all([...sessions.values()].map((s) => s.close()));
      worker?.terminate();
      worker = null;
    },
  };
}
