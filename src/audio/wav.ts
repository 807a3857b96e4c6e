// RIFF/WAVE mono, PCM16 or G.711 mu-law: the formats of call recordings and of the speech fixtures tests
// generate.
import { muLawDecode } from "./g711";
import { bytesToPcm, pcmToBytes } from "./pcm";

export type Wav = { sampleRate: number; samples: Int16Array };

export class WavFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WavFormatError";
  }
}

export type WavEncoding = "pcm16" | "ulaw";

/** Bytes of the header `wavHeader` writes for an encoding (the data follows it). */
export const wavHeaderBytes = (encoding: WavEncoding) => (encoding === "pcm16" ? 44 : 58);

/**
 * The header of a mono WAV whose data is `dataBytes` long. mu-law (format 7) is a non-PCM format: its
 * fmt chunk carries cbSize and a fact chunk gives the sample count.
 */
export function wavHeader(encoding: WavEncoding, sampleRate: number, dataBytes: number): Buffer {
  const pcm = encoding === "pcm16";
  const bytesPerSample = pcm ? 2 : 1;
  const header = Buffer.alloc(wavHeaderBytes(encoding));
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(header.length - 8 + dataBytes, 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(pcm ? 16 : 18, 16); // fmt chunk size
  header.writeUInt16LE(pcm ? 1 : 7, 20); // PCM or mu-law
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * bytesPerSample, 28); // byte rate
  header.writeUInt16LE(bytesPerSample, 32); // block align
  header.writeUInt16LE(bytesPerSample * 8, 34); // bits per sample
  let offset = 36;
  if (!pcm) {
    header.writeUInt16LE(0, 36); // cbSize
    header.write("fact", 38, "ascii");
    header.writeUInt32LE(4, 42);
    header.writeUInt32LE(dataBytes, 46); // samples
    offset = 50;
  }
  header.write("data", offset, "ascii");
  header.writeUInt32LE(dataBytes, offset + 4);
  return header;
}

export function encodeWav(samples: Int16Array, sampleRate: number): Buffer {
  const data = pcmToBytes(samples);
  return Buffer.concat([wavHeader("pcm16", sampleRate, data.length), data]);
}

/** Parses a PCM16 or mu-law mono WAV, walking the chunks (tools add LIST and other chunks before `data`). */
export function parseWav(bytes: Uint8Array): Wav {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 12 || buf.toString("ascii", 0, 4) !== "RIFF" || buf.toString("ascii", 8, 12) !== "WAVE") {
    throw new WavFormatError("not a RIFF/WAVE file");
  }
  let sampleRate = 0;
  let muLaw = false;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString("ascii", offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === "fmt ") {
      const format = buf.readUInt16LE(body);
      const channels = buf.readUInt16LE(body + 2);
      const bits = buf.readUInt16LE(body + 14);
      muLaw = format === 7 && bits === 8;
      // 0xfffe is WAVE_FORMAT_EXTENSIBLE, which sox writes; its PCM16 mono payload is the same
      if ((!muLaw && ((format !== 1 && format !== 0xfffe) || bits !== 16)) || channels !== 1) {
        throw new WavFormatError(`unsupported WAV format ${format}, ${channels} channels, ${bits} bits`);
      }
      sampleRate = buf.readUInt32LE(body + 4);
    } else if (id === "data") {
      if (!sampleRate) throw new WavFormatError("data chunk before fmt chunk");
      // streaming writers leave the size at 0 or 0xffffffff: take what is there
      const end = size === 0 || body + size > buf.length ? buf.length : body + size;
      const data = buf.subarray(body, end);
      return { sampleRate, samples: muLaw ? muLawDecode(data) : bytesToPcm(data) };
    }
    offset = body + size + (size & 1); // chunks are word-aligned
  }
  throw new WavFormatError("no data chunk");
}
