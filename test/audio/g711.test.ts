import { describe, expect, test } from "bun:test";
import { aLawDecode, aLawEncode, muLawDecode, muLawEncode } from "../../src/audio/g711";
import { rms } from "../../src/audio/pcm";
import { sine } from "./signals";

const allSamples = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
const allCodes = Uint8Array.from({ length: 256 }, (_, i) => i);

function snrDb(original: Int16Array, decoded: Int16Array): number {
  const error = original.map((x, i) => x - decoded[i]!);
  return 20 * Math.log10(rms(original) / rms(error));
}

describe("mu-law", () => {
  test("known code words (ITU G.711 table)", () => {
    expect([...muLawEncode(Int16Array.of(0, 32767, -32768, -1))]).toEqual([0xff, 0x80, 0x00, 0x7f]);
    expect([...muLawDecode(Uint8Array.of(0xff, 0x7f, 0x80, 0x00, 0xfe, 0x7e))]).toEqual([0, 0, 32124, -32124, 8, -8]);
  });

  test("every code word survives decode then encode; the decoded scale is monotonic", () => {
    const decoded = muLawDecode(allCodes);
    const reencoded = muLawEncode(decoded);
    for (const code of allCodes) {
      // 0x7f is negative zero, which encodes as positive zero 0xff
      expect(reencoded[code]).toBe(code === 0x7f ? 0xff : code);
    }
    const positive = [...decoded.subarray(0x80, 0x100)].reverse();
    for (let i = 1; i < positive.length; i++) expect(positive[i]).toBeGreaterThan(positive[i - 1]!);
  });

  test("round trip error stays within half a quantisation step over the whole 16-bit range", () => {
    const decoded = muLawDecode(muLawEncode(allSamples));
    allSamples.forEach((x, i) => {
      const clipped = Math.max(-32124, Math.min(32124, x));
      expect(Math.abs(decoded[i]! - clipped)).toBeLessThanOrEqual(Math.abs(clipped) / 32 + 8);
    });
  });

  test("a speech-level sine keeps the ~38 dB SNR of 8-bit log PCM", () => {
    const tone = sine(1000, 8000, 0.5, 8000);
    expect(snrDb(tone, muLawDecode(muLawEncode(tone)))).toBeGreaterThan(33);
  });
});

describe("A-law", () => {
  test("known code words (ITU G.711 table)", () => {
    expect([...aLawEncode(Int16Array.of(0, 32767, -32768, -1))]).toEqual([0xd5, 0xaa, 0x2a, 0x55]);
    expect([...aLawDecode(Uint8Array.of(0xd5, 0x55, 0xaa, 0x2a))]).toEqual([8, -8, 32256, -32256]);
  });

  test("every code word survives decode then encode", () => {
    expect([...aLawEncode(aLawDecode(allCodes))]).toEqual([...allCodes]);
  });

  test("round trip error stays within half a quantisation step", () => {
    const decoded = aLawDecode(aLawEncode(allSamples));
    allSamples.forEach((x, i) => {
      const clipped = Math.max(-32256, Math.min(32256, x));
      expect(Math.abs(decoded[i]! - clipped)).toBeLessThanOrEqual(Math.abs(clipped) / 32 + 16);
    });
  });

  test("a speech-level sine keeps the ~38 dB SNR of 8-bit log PCM", () => {
    const tone = sine(1000, 8000, 0.5, 8000);
    expect(snrDb(tone, aLawDecode(aLawEncode(tone)))).toBeGreaterThan(33);
  });
});
