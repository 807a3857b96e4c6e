// RIFF/WAVE, PCM16 mono: the format of call recordings and of the speech fixtures tests generate.
import { bytesToPcm, pcmToBytes } from "./pcm";

export type Wav = { sampleRate: number; samples: Int16Array };

export class WavFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WavFormatError";
  }
}

const headerBytes = 44;

export function encodeWav(samples: Int16Array, sampleRate: number): Buffer {
  const data = pcmToBytes(samples);
  const header = Buffer.alloc(headerBytes);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write("data", 36, "ascii");
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** Parses a PCM16 mono WAV, walking the chunks (tools add LIST and other chunks before `data`). */
export function parseWav(bytes: Uint8Array): Wav {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 12 || buf.toString("ascii", 0, 4) !== "RIFF" || buf.toString("ascii", 8, 12) !== "WAVE") {
    throw new WavFormatError("not a RIFF/WAVE file");
  }
  let sampleRate = 0;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString("ascii", offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === "fmt ") {
      const format = buf.readUInt16LE(body);
      const channels = buf.readUInt16LE(body + 2);
      const bits = buf.readUInt16LE(body + 14);
      // 0xfffe is WAVE_FORMAT_EXTENSIBLE, which sox writes; its PCM16 mono payload is the same
      if ((format !== 1 && format !== 0xfffe) || channels !== 1 || bits !== 16) {
        throw new WavFormatError(`unsupported WAV format ${format}, ${channels} channels, ${bits} bits`);
      }
      sampleRate = buf.readUInt32LE(body + 4);
    } else if (id === "data") {
      if (!sampleRate) throw new WavFormatError("data chunk before fmt chunk");
      // streaming writers leave the size at 0 or 0xffffffff: take what is there
      const end = size === 0 || body + size > buf.length ? buf.length : body + size;
      return { sampleRate, samples: bytesToPcm(buf.subarray(body, end)) };
    }
    offset = body + size + (size & 1); // chunks are word-aligned
  }
  throw new WavFormatError("no data chunk");
}
