import { describe, expect, test } from "bun:test";
import { base64ToPcm, bytesToPcm, pcmToBase64, pcmToBytes, rms } from "../../src/audio/pcm";
import { encodeWav, parseWav, WavFormatError } from "../../src/audio/wav";
import { sine } from "./signals";

describe("pcm helpers", () => {
  test("little-endian bytes round trip, also from an unaligned view", () => {
    const samples = Int16Array.of(0, 1, -1, 32767, -32768, 258);
    const bytes = pcmToBytes(samples);
    expect([...bytes.subarray(0, 8)]).toEqual([0, 0, 1, 0, 0xff, 0xff, 0xff, 0x7f]);
    const unaligned = new Uint8Array(bytes.length + 1);
    unaligned.set(bytes, 1);
    expect([...bytesToPcm(unaligned.subarray(1))]).toEqual([...samples]);
    expect([...base64ToPcm(pcmToBase64(samples))]).toEqual([...samples]);
  });

  test("rms of a sine is amplitude / sqrt 2, of silence 0", () => {
    expect(rms(sine(1000, 8000, 0.1, 10000))).toBeCloseTo(10000 / Math.SQRT2, -1);
    expect(rms(new Int16Array(160))).toBe(0);
    expect(rms(new Int16Array(0))).toBe(0);
  });
});

describe("wav", () => {
  test("header describes PCM16 mono at the given rate and the length matches the samples", () => {
    const samples = sine(440, 16000, 0.25);
    const wav = encodeWav(samples, 16000);
    expect(wav.length).toBe(44 + samples.length * 2);
    expect(wav.toString("ascii", 0, 4)).toBe("RIFF");
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    expect(wav.toString("ascii", 8, 16)).toBe("WAVEfmt ");
    expect([wav.readUInt16LE(20), wav.readUInt16LE(22), wav.readUInt32LE(24), wav.readUInt16LE(34)]).toEqual([
      1, 1, 16000, 16,
    ]);
    expect(wav.readUInt32LE(40)).toBe(samples.length * 2);
    const parsed = parseWav(wav);
    expect(parsed.sampleRate).toBe(16000);
    expect([...parsed.samples]).toEqual([...samples]);
  });

  test("parsing skips extra chunks before data", () => {
    const wav = encodeWav(Int16Array.of(1, 2, 3), 8000);
    const list = Buffer.concat([Buffer.from("LIST"), Buffer.from([5, 0, 0, 0]), Buffer.from("INFOx"), Buffer.alloc(1)]);
    const withList = Buffer.concat([wav.subarray(0, 36), list, wav.subarray(36)]);
    expect([...parseWav(withList).samples]).toEqual([1, 2, 3]);
  });

  test("non-WAV and non-PCM16-mono input is refused with a named error", () => {
    expect(() => parseWav(Buffer.from("hello world, not a wav"))).toThrow(WavFormatError);
    const stereo = encodeWav(Int16Array.of(1, 2), 8000);
    stereo.writeUInt16LE(2, 22);
    expect(() => parseWav(stereo)).toThrow("2 channels");
  });
});
