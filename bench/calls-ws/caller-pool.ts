// N simulated callers in our wire format. One shared 5 ms loop sends each caller's 20 ms frames in
// real time (silence, or a short question once the agent has finished a reply). Every agent frame's
// arrival time is recorded: jitter is how far consecutive frames of one reply are from 20 ms apart,
// and a reply that arrives with fewer frames than the provider produced has lost some. Jitter and this
// process's own timer lag go into histograms (bench/lib/histogram.ts): sorting half a million samples
// for a progress line stalled this loop for longer than the jitter it measures.
import { Histogram } from "../lib/histogram";

export type PoolOptions = {
  url: string;
  sampleRate: number;
  question: Int16Array;
  replyFrames: number;
  /** also every jitter sample and when it was taken (`samples`), for windows around an event */
  keepSamples?: boolean;
};

type Caller = {
  ws: WebSocket;
  sent: number;
  started: number;
  queue: Int16Array[];
  lastFrameAt: number;
  burstFrames: number;
};

export type PoolStats = {
  calls: number;
  frames: number;
  jitters: Histogram;
  /** with keepSamples: each jitter, and when it was measured (performance.now ms) */
  samples: { jitters: number[]; times: number[] };
  clientLag: Histogram;
  bursts: number;
  lostFrames: number;
  extraFrames: number;
  failed: number;
};

const quietMs = 300;

export function createCallerPool(options: PoolOptions) {
  const frameSamples = options.sampleRate / 50;
  const silence = new Uint8Array(frameSamples * 2);
  const callers = new Set<Caller>();
  const stats: PoolStats = {
    calls: 0,
    frames: 0,
    jitters: new Histogram(),
    samples: { jitters: [], times: [] },
    clientLag: new Histogram(),
    bursts: 0,
    lostFrames: 0,
    extraFrames: 0,
    failed: 0,
  };

  const endBurst = (c: Caller) => {
    if (c.burstFrames === 0) return;
    stats.bursts++;
    stats.lostFrames += Math.max(0, options.replyFrames - c.burstFrames);
    stats.extraFrames += Math.max(0, c.burstFrames - options.replyFrames);
    c.burstFrames = 0;
  };

  let lastLoop = performance.now();
  const loop = setInterval(() => {
    const now = performance.now();
    // this process's own timer lateness: jitter it adds to what it measures
    stats.clientLag.add(Math.max(0, now - lastLoop - 5));
    lastLoop = now;
    for (const c of callers) {
      if (c.ws.readyState !== WebSocket.OPEN) continue;
      // the agent finished a reply: ask the next question (no barge-in, so every reply plays in full)
      if (c.burstFrames > 0 && now - c.lastFrameAt > quietMs) {
        endBurst(c);
        if (c.queue.length === 0)
          for (let i = 0; i < options.question.length; i += frameSamples)
            c.queue.push(options.question.subarray(i, i + frameSamples));
      }
      while (c.sent * 20 <= now - c.started) {
        const frame = c.queue.shift();
        c.ws.send(frame ? new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength) : silence);
        c.sent++;
      }
    }
  }, 5);

  function dial(): Promise<void> {
    return new Promise((resolve) => {
      const ws = new WebSocket(options.url);
      ws.binaryType = "arraybuffer";
      const c: Caller = { ws, sent: 0, started: 0, queue: [], lastFrameAt: 0, burstFrames: 0 };
      ws.onmessage = (event) => {
        if (typeof event.data === "string") {
          if (JSON.parse(event.data).type === "ready") {
            c.started = performance.now();
            callers.add(c);
            stats.calls++;
            resolve();
          }
          return;
        }
        const now = performance.now();
        stats.frames++;
        if (c.burstFrames > 0) {
          const jitter = Math.abs(now - c.lastFrameAt - 20);
          stats.jitters.add(jitter);
          if (options.keepSamples) {
            stats.samples.jitters.push(jitter);
            stats.samples.times.push(now);
          }
        }
        c.burstFrames++;
        c.lastFrameAt = now;
      };
      ws.onclose = () => {
        if (!callers.delete(c)) stats.failed++;
        resolve();
      };
    });
  }

  return {
    stats,
    dial,
    get active() {
      return callers.size;
    },
    /** Hangs every caller up (a burst cut short by the hangup is not counted). */
    async hangUpAll() {
      const closing = [...callers].map(
        (c) =>
          new Promise((resolve) => {
            c.ws.onclose = resolve;
            c.ws.close(1000);
          }),
      );
      callers.clear();
      clearInterval(loop);
      await Promise.all(closing);
    },
  };
}
