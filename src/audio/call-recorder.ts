// Mixes both sides of a call onto one timeline and writes it to a WAV file as the call runs, so a call's
// memory stays flat whatever its length: only the last second or two of the mix is held, older
// seconds go to the file in the recording's encoding (mu-law at 8 kHz, or PCM16 at the call's rate).
// Each side is placed by frame position (frames follow each other without gaps), re-anchored to the
// wall clock when it falls behind by more than `slackMs` (the side sent nothing for a while), so
// silences keep their real length and the recording lasts exactly as long as the call. Past
// `maxBytes` of audio the file stops growing: it holds the start of the call, marked truncated.
// Off the media path: a frame only mixes into memory; a whole second is encoded and written by the
// thread pool (no synchronous file call on the event loop, opening and closing included).
import { type FileHandle, open } from "node:fs/promises";
import { muLawEncode } from "./g711";
import { pcmToBytes } from "./pcm";
import { createResampler } from "./resampler";
import { wavHeader, wavHeaderBytes, type WavEncoding } from "./wav";

export type CallSide = "caller" | "agent";
export type RecordingFormat = "ulaw" | "pcm16";
export type FinishedRecording = { path: string; contentType: "audio/wav"; bytes: number; truncated: boolean };

export interface CallRecorder {
  readonly sampleRate: number;
  /** Adds a frame of one side (PCM16 at the recorder's rate) that starts playing/arriving now, or in `aheadMs`. */
  add(side: CallSide, samples: Int16Array, aheadMs?: number): void;
  /** Writes the call from start to now (or `endedAt`, same clock as `now`) and completes the file. */
  finish(endedAt?: number): Promise<FinishedRecording>;
}

export type CallRecorderOptions = {
  sampleRate: number;
  /** The WAV file written (created or replaced). */
  path: string;
  format: RecordingFormat;
  /** Audio bytes kept at most; the rest of a longer call is dropped. */
  maxBytes: number;
  /** Monotonic clock in ms; injectable for tests. */
  now?: () => number;
  slackMs?: number;
};

const chunkSeconds = 1;

export function createCallRecorder(options: CallRecorderOptions): CallRecorder {
  const { sampleRate, path, format, maxBytes, now = () => performance.now(), slackMs = 100 } = options;
  const startedAt = now();
  const chunkSize = sampleRate * chunkSeconds;
  // mix chunks not yet in the file, by index; chunks before `flushed` are written
  const chunks = new Map<number, Int16Array>();
  let flushed = 0;
  const cursor: Record<CallSide, number> = { caller: 0, agent: 0 };
  const slack = Math.round((slackMs * sampleRate) / 1000);
  const positionAt = (time: number) => Math.max(0, Math.round(((time - startedAt) * sampleRate) / 1000));

  const encoding: WavEncoding = format === "ulaw" ? "ulaw" : "pcm16";
  const fileRate = format === "ulaw" ? 8000 : sampleRate;
  const toFileRate = createResampler(sampleRate, fileRate);
  const encode = (pcm: Int16Array): Uint8Array =>
    format === "ulaw" ? muLawEncode(toFileRate.process(pcm)) : pcmToBytes(pcm);
  const file = new AppendOnlyFile(
    path,
    wavHeaderBytes(encoding),
    maxBytes - (maxBytes % (encoding === "pcm16" ? 2 : 1)),
  );

  function chunkAt(c: number) {
    let chunk = chunks.get(c);
    if (!chunk) {
      chunk = new Int16Array(chunkSize);
      chunks.set(c, chunk);
    }
    return chunk;
  }

  function mixAt(position: number, samples: Int16Array) {
    for (let i = 0; i < samples.length; ) {
      const at = position + i;
      const c = Math.floor(at / chunkSize);
      const offset = at - c * chunkSize;
      const n = Math.min(samples.length - i, chunkSize - offset);
      if (c >= flushed) {
        const chunk = chunkAt(c);
        for (let k = 0; k < n; k++) {
          const sum = chunk[offset + k]! + samples[i + k]!;
          // saturate instead of wrapping around when both sides are loud at once
          chunk[offset + k] = Math.max(-32768, Math.min(32767, sum));
        }
      }
      i += n;
    }
  }

  /** Writes every whole chunk that ends at or before `position`. */
  function flushUpTo(position: number) {
    while ((flushed + 1) * chunkSize <= position) {
      file.append(encode(chunks.get(flushed) ?? new Int16Array(chunkSize)));
      chunks.delete(flushed);
      flushed++;
    }
  }

  return {
    sampleRate,
    add(side, samples, aheadMs = 0) {
      const at = now();
      const wall = positionAt(at);
      const due = aheadMs > 0 ? positionAt(at + aheadMs) : wall;
      const position = due - cursor[side] > slack ? due : cursor[side];
      mixAt(position, samples);
      cursor[side] = position + samples.length;
      // nothing is placed earlier than `slack` before the wall clock: what lies before is final
      flushUpTo(wall - slack);
    },
    async finish(endedAt = now()) {
      const length = positionAt(endedAt);
      flushUpTo(length);
      const rest = length - flushed * chunkSize;
      if (rest > 0) file.append(encode((chunks.get(flushed) ?? new Int16Array(chunkSize)).subarray(0, rest)));
      chunks.clear();
      const bytes = await file.close((dataBytes) => wavHeader(encoding, fileRate, dataBytes));
      return { path, contentType: "audio/wav", bytes, truncated: file.truncated };
    },
  };
}

/** A file written at growing offsets without waiting (writes at fixed positions may land in any order). */
class AppendOnlyFile {
  // every write waits for the open; an open that failed fails the recording at close
  private readonly file: Promise<FileHandle | null>;
  private position: number;
  private readonly pending = new Set<Promise<void>>();
  private error: Error | null = null;
  truncated = false;

  constructor(
    readonly path: string,
    private readonly headerBytes: number,
    private readonly maxDataBytes: number,
  ) {
    this.file = open(path, "w").catch((error: Error) => {
      this.error ??= error;
      return null;
    });
    this.position = headerBytes;
  }

  append(bytes: Uint8Array) {
    const room = this.maxDataBytes - (this.position - this.headerBytes);
    if (bytes.length > room) this.truncated = true;
    const part = bytes.length > room ? bytes.subarray(0, Math.max(0, room)) : bytes;
    if (part.length > 0) this.writeAt(part, this.position);
    this.position += part.length;
  }

  /** Waits for every write, puts the header (which needs the data's length) first, closes. */
  async close(header: (dataBytes: number) => Uint8Array): Promise<number> {
    this.writeAt(header(this.position - this.headerBytes), 0);
    while (this.pending.size > 0) await Promise.all(this.pending);
    await (await this.file)?.close();
    if (this.error) throw this.error;
    return this.position;
  }

  private writeAt(bytes: Uint8Array, position: number) {
    const done: Promise<void> = this.file
      .then((file) => file?.write(bytes, 0, bytes.length, position))
      .then(
        () => {},
        (error: Error) => {
          this.error ??= error;
        },
      )
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }
}
