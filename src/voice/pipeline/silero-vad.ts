// Silero VAD v5: the speech probability of each 32 ms window, scored by the process's VAD thread
// (vad-thread-worker.ts) so that the model's runs never hold up the event loop. Each stream keeps its
// own context and recurrent state here and sends them with every window; the windows of every call
// asked for in one turn of the event loop cross in one message, and the thread scores them in one run.
import { stateSize, type FromVadThread, type ToVadThread, type VadJob, type VadRate } from "./vad-protocol";

export type { VadRate };

/** Samples per window and of the context carried from the previous window, as the model was trained. */
export const windowSamples = (rate: VadRate) => (rate === 16000 ? 512 : 256);
const contextSamples = (rate: VadRate) => (rate === 16000 ? 64 : 32);

type Waiter = { resolve: (scored: { probability: number; state: Float32Array }) => void; reject: (e: Error) => void };

let thread: { worker: Worker; ready: Promise<void> } | null = null;
let nextId = 0;
const waiting = new Map<number, Waiter>();
let outbox: VadJob[] = [];

function vadThread() {
  if (thread) return thread;
  const worker = new Worker(new URL("./vad-thread-worker.ts", import.meta.url));
  worker.unref(); // an idle thread must not keep the process alive
  const ready = new Promise<void>((resolve, reject) => {
    worker.onmessage = ({ data }: MessageEvent<FromVadThread>) => {
      if (data.t === "ready") return resolve();
      if (data.t === "scored")
        for (const { id, ...scored } of data.results) {
          waiting.get(id)?.resolve(scored);
          waiting.delete(id);
        }
      else
        for (const id of data.ids) {
          waiting.get(id)?.reject(new Error(data.error));
          waiting.delete(id);
        }
    };
    worker.onerror = (event) => {
      // what it held fails (the calls' detectors report it); the next window starts a new thread
      const error = new Error(`the VAD thread failed: ${event.message}`);
      if (thread?.worker === worker) thread = null;
      worker.terminate();
      reject(error);
      for (const waiter of waiting.values()) waiter.reject(error);
      waiting.clear();
    };
  });
  ready.catch(() => {}); // a thread that fails to start fails its windows (above) and create()'s callers
  thread = { worker, ready };
  return thread;
}

/** Sends the windows asked for in this turn of the event loop, as one message (once the model is loaded: a thread
 * started again after a failure sets its handler only then). */
function flush() {
  const jobs = outbox;
  outbox = [];
  const { worker, ready } = vadThread();
  void ready.then(() => worker.postMessage({ t: "score", jobs } satisfies ToVadThread));
}

export class SileroVad {
  readonly windowSamples: number;
  private readonly input: Float32Array;
  private readonly context: number;
  private state: Float32Array = new Float32Array(stateSize);

  private constructor(readonly sampleRate: VadRate) {
    this.windowSamples = windowSamples(sampleRate);
    this.context = contextSamples(sampleRate);
    this.input = new Float32Array(this.context + this.windowSamples);
  }

  /** Resolves once the VAD thread has loaded the model. */
  static async create(sampleRate: VadRate): Promise<SileroVad> {
    await vadThread().ready;
    return new SileroVad(sampleRate);
  }

  /** Back to the state of a new stream (after windows that were not scored). */
  reset() {
    this.state.fill(0);
    this.input.fill(0);
  }

  /** Speech probability (0..1) of one window of exactly windowSamples; call in order, one at a time. */
  async probability(window: Int16Array): Promise<number> {
    if (window.length !== this.windowSamples)
      throw new Error(`a VAD window is ${this.windowSamples} samples, got ${window.length}`);
    const input = this.input;
    input.copyWithin(0, input.length - this.context); // the previous window's tail is this one's context
    for (let i = 0; i < window.length; i++) input[this.context + i] = (window[i] ?? 0) / 32768;
    const id = ++nextId;
    const scored = new Promise<{ probability: number; state: Float32Array }>((resolve, reject) =>
      waiting.set(id, { resolve, reject }),
    );
    if (outbox.length === 0) queueMicrotask(flush);
    outbox.push({ id, rate: this.sampleRate, input: input.slice(), state: this.state });
    const { probability, state } = await scored;
    this.state = state;
    return probability;
  }
}
