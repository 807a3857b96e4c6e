// What crosses between silero-vad.ts and its thread (vad-thread-worker.ts), in a module of its own:
// importing a value from the worker's module would run the worker (and load the model) where it is imported.
export type VadRate = 8000 | 16000;
/** One window to score: `input` is its samples after the previous window's context, `state` the stream's. */
export type VadJob = { id: number; rate: VadRate; input: Float32Array; state: Float32Array };
export type ToVadThread = { t: "score"; jobs: VadJob[] };
export type FromVadThread =
  | { t: "ready" }
  | { t: "scored"; results: { id: number; probability: number; state: Float32Array }[] }
  | { t: "failed"; ids: number[]; error: string };

/** The model's recurrent state per stream: [2, 1, 128]; a batch's is [2, batch, 128]. */
export const stateSize = 2 * 128;
