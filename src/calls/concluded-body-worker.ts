// Worker thread of concluded-body.ts: reads a call's WAV, base64-encodes it into its call_concluded and
// serializes the payload, away from the event loop that paces every call's audio.
import { readFileSync } from "node:fs";
import { serializePayload, type CallConcludedPayload } from "../events/payloads";

export type BodyJob = { id: number; event: CallConcludedPayload; recordingPath: string };
export type BodyResult = { id: number; body: string; audio: ArrayBuffer } | { id: number; error: string };

declare const self: Worker;

self.onmessage = ({ data: job }: MessageEvent<BodyJob>) => {
  try {
    const wav = readFileSync(job.recordingPath);
    const body = serializePayload({ ...job.event, callRecording: wav.toString("base64") });
    const audio = wav.buffer.slice(wav.byteOffset, wav.byteOffset + wav.byteLength) as ArrayBuffer;
    self.postMessage({ id: job.id, body, audio } satisfies BodyResult, [audio]);
  } catch (error) {
    self.postMessage({
      id: job.id,
      error: error instanceof Error ? error.message : String(error),
    } satisfies BodyResult);
  }
};
