// ITU-T G.711 mu-law and A-law, PCM16 <-> 8-bit. The per-sample algorithms follow the reference
// (Sun's public-domain g711.c, with ITU-T G.191's symmetric handling of negatives); they run once at
// load to fill lookup tables, so the per-frame work is one table read per sample.

const muLawBias = 0x84;
const muLawClip = 8159;
const muLawSegmentEnds = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff];
const aLawSegmentEnds = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];

function segmentOf(value: number, ends: number[]): number {
  const seg = ends.findIndex((end) => value <= end);
  return seg === -1 ? 8 : seg;
}

function linearToMuLaw(sample: number): number {
  // negatives use the one's complement as in ITU-T G.191, so -1 maps to negative zero like +0 to zero
  const negative = sample < 0;
  let value = (negative ? ~sample : sample) >> 2;
  const mask = negative ? 0x7f : 0xff;
  value = Math.min(value, muLawClip) + (muLawBias >> 2);
  const seg = segmentOf(value, muLawSegmentEnds);
  if (seg >= 8) return 0x7f ^ mask;
  return ((seg << 4) | ((value >> (seg + 1)) & 0x0f)) ^ mask;
}

function muLawToLinear(code: number): number {
  const u = ~code & 0xff;
  const t = (((u & 0x0f) << 3) + muLawBias) << ((u & 0x70) >> 4);
  return u & 0x80 ? muLawBias - t : t - muLawBias;
}

function linearToALaw(sample: number): number {
  let value = sample >> 3;
  let mask = 0xd5;
  if (value < 0) {
    mask = 0x55;
    value = -value - 1;
  }
  const seg = segmentOf(value, aLawSegmentEnds);
  if (seg >= 8) return 0x7f ^ mask;
  const quant = seg < 2 ? (value >> 1) & 0x0f : (value >> seg) & 0x0f;
  return ((seg << 4) | quant) ^ mask;
}

function aLawToLinear(code: number): number {
  const a = code ^ 0x55;
  let t = (a & 0x0f) << 4;
  const seg = (a & 0x70) >> 4;
  if (seg === 0) t += 8;
  else t = (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

// Encode tables are indexed by the sample's 16-bit two's-complement pattern (sample & 0xffff).
function buildEncodeTable(encode: (sample: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = encode((i << 16) >> 16);
  return table;
}

const buildDecodeTable = (decode: (code: number) => number): Int16Array =>
  Int16Array.from({ length: 256 }, (_, code) => decode(code));

const muLawEncodeTable = buildEncodeTable(linearToMuLaw);
const aLawEncodeTable = buildEncodeTable(linearToALaw);
const muLawDecodeTable = buildDecodeTable(muLawToLinear);
const aLawDecodeTable = buildDecodeTable(aLawToLinear);

/**
 * Encodes `count` samples of `pcm` from `from` on into `out` from `offset` on: the paced RTP sender
 * writes into its reused packet buffers, from a batch of frames without a view per frame.
 */
function encodeInto(table: Uint8Array, pcm: Int16Array, out: Uint8Array, offset: number, from: number, count: number) {
  for (let i = 0; i < count; i++) out[offset + i] = table[pcm[from + i]! & 0xffff]!;
  return out;
}

function decodeWith(table: Int16Array, codes: Uint8Array): Int16Array {
  const out = new Int16Array(codes.length);
  for (let i = 0; i < codes.length; i++) out[i] = table[codes[i]!]!;
  return out;
}

export const muLawEncodeInto = (pcm: Int16Array, out: Uint8Array, offset = 0, from = 0, count = pcm.length - from) =>
  encodeInto(muLawEncodeTable, pcm, out, offset, from, count);
export const aLawEncodeInto = (pcm: Int16Array, out: Uint8Array, offset = 0, from = 0, count = pcm.length - from) =>
  encodeInto(aLawEncodeTable, pcm, out, offset, from, count);
export const muLawEncode = (pcm: Int16Array): Uint8Array => muLawEncodeInto(pcm, new Uint8Array(pcm.length));
export const muLawDecode = (codes: Uint8Array): Int16Array => decodeWith(muLawDecodeTable, codes);
export const aLawEncode = (pcm: Int16Array): Uint8Array => aLawEncodeInto(pcm, new Uint8Array(pcm.length));
export const aLawDecode = (codes: Uint8Array): Int16Array => decodeWith(aLawDecodeTable, codes);
