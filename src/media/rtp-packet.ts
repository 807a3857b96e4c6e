// RTP fixed header (RFC 3550 §5.1): parsed defensively (CSRCs, extension, padding), written in place
// into a buffer the sender reuses. Anything that is not version 2 with a sane length is not RTP. Byte
// reads and writes, not a DataView: nothing is allocated per packet but the parsed fields.
export type RtpPacket = {
  payloadType: number;
  marker: boolean;
  sequence: number;
  timestamp: number;
  ssrc: number;
  payload: Uint8Array;
};

export const rtpHeaderBytes = 12;

const u16 = (d: Uint8Array, at: number) => (d[at]! << 8) | d[at + 1]!;
/** The big-endian 32-bit word at `at` (an RTP header's timestamp is at 4, its SSRC at 8). */
export const readU32 = (d: Uint8Array, at: number) =>
  ((d[at]! << 24) | (d[at + 1]! << 16) | (d[at + 2]! << 8) | d[at + 3]!) >>> 0;

export function parseRtp(data: Uint8Array): RtpPacket | null {
  const [first = 0, second = 0] = data;
  if (data.length < rtpHeaderBytes || first >> 6 !== 2) return null;
  let start = rtpHeaderBytes + (first & 0x0f) * 4;
  if (first & 0x10) {
    if (data.length < start + 4) return null;
    start += 4 + u16(data, start + 2) * 4;
  }
  let end = data.length;
  if (first & 0x20) end -= data[data.length - 1]!;
  if (end < start) return null;
  return {
    payloadType: second & 0x7f,
    marker: (second & 0x80) !== 0,
    sequence: u16(data, 2),
    timestamp: readU32(data, 4),
    ssrc: readU32(data, 8),
    payload: data.subarray(start, end),
  };
}

function putU32(out: Uint8Array, at: number, value: number) {
  out[at] = value >>> 24;
  out[at + 1] = (value >>> 16) & 0xff;
  out[at + 2] = (value >>> 8) & 0xff;
  out[at + 3] = value & 0xff;
}

/** Writes the 12-byte fixed header (no CSRCs, extension or padding) at the start of `out`. */
export function writeRtpHeader(out: Uint8Array, header: Omit<RtpPacket, "payload">) {
  out[0] = 0x80;
  out[1] = (header.marker ? 0x80 : 0) | (header.payloadType & 0x7f);
  out[2] = (header.sequence >> 8) & 0xff;
  out[3] = header.sequence & 0xff;
  putU32(out, 4, header.timestamp >>> 0);
  putU32(out, 8, header.ssrc >>> 0);
}

/** A new packet (peers in tests and benches; the bridge's sender writes into its own buffer). */
export function buildRtp(header: Omit<RtpPacket, "payload">, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(rtpHeaderBytes + payload.length);
  writeRtpHeader(out, header);
  out.set(payload, rtpHeaderBytes);
  return out;
}

/** Distance from `a` to `b` in 16-bit sequence space (negative when `b` is older). */
export function sequenceDelta(a: number, b: number): number {
  const d = (b - a) & 0xffff;
  return d >= 0x8000 ? d - 0x10000 : d;
}
