// PCM16 little-endian byte buffers <-> Int16Array samples, and the energy measure used for VAD and tests.
import { endianness } from "node:os";

// Typed arrays use the host's byte order; on little-endian hosts (all we run on) a plain copy suffices.
const hostIsLittleEndian = endianness() === "LE";

/** Copies bytes into a fresh Int16Array (the source may be unaligned or a view into a bigger buffer). */
export function bytesToPcm(bytes: Uint8Array): Int16Array {
  if (hostIsLittleEndian) {
    // into an ArrayBuffer of our own: reading `.buffer` of a new Int16Array would make the engine
    // allocate and copy it a second time (this runs for every frame a caller sends)
    const buffer = new ArrayBuffer(bytes.length & ~1);
    new Uint8Array(buffer).set(bytes.subarray(0, buffer.byteLength));
    return new Int16Array(buffer);
  }
  const samples = new Int16Array(bytes.length >> 1);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true);
  return samples;
}

/** Little-endian bytes of the samples as a Buffer: a view of the samples (no copy) on little-endian hosts. */
export function pcmToBytes(samples: Int16Array): Buffer {
  if (hostIsLittleEndian) return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const bytes = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i]!, i * 2);
  return bytes;
}

export const pcmToBase64 = (samples: Int16Array): string => pcmToBytes(samples).toString("base64");
export const base64ToPcm = (data: string): Int16Array => bytesToPcm(Buffer.from(data, "base64"));

/** Root-mean-square level on the 16-bit scale (0..32767); 0 for an empty frame. */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / samples.length);
}

/** Whether a frame has speech in it: a sample above -54 dBFS (TTS and espeak pad speech with digital silence). */
export const hasSpeech = (frame: Int16Array) => frame.some((x) => x > 64 || x < -64);

/** Rounds and saturates a float sample to the Int16 range. */
export function clampSample(value: number): number {
  const v = Math.round(value);
  return Math.max(-32768, Math.min(32767, v));
}

export function concatPcm(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
