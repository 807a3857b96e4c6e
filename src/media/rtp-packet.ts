// RTP fixed header (RFC 3550 §5.1): parsed defensively (CSRCs, extension, padding), built into one
// buffer per packet. Anything that is not version 2 with a sane length is not RTP.
export type RtpPacket = {
  payloadType: number;
  marker: boolean;
  sequence: number;
  timestamp: number;
  ssrc: number;
  payload: Uint8Array;
};

export const rtpHeaderBytes = 12;

export function parseRtp(data: Uint8Array): RtpPacket | null {
  const [first = 0, second = 0] = data;
  if (data.length < rtpHeaderBytes || first >> 6 !== 2) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let start = rtpHeaderBytes + (first & 0x0f) * 4;
  if (first & 0x10) {
    if (data.length < start + 4) return null;
    start += 4 + view.getUint16(start + 2) * 4;
  }
  let end = data.length;
  if (first & 0x20) end -= view.getUint8(data.length - 1);
  if (end < start) return null;
  return {
    payloadType: second & 0x7f,
    marker: (second & 0x80) !== 0,
    sequence: view.getUint16(2),
    timestamp: view.getUint32(4),
    ssrc: view.getUint32(8),
    payload: data.subarray(start, end),
  };
}

export function buildRtp(packet: Omit<RtpPacket, "payload">, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(rtpHeaderBytes + payload.length);
  const view = new DataView(out.buffer);
  out[0] = 0x80;
  out[1] = (packet.marker ? 0x80 : 0) | (packet.payloadType & 0x7f);
  view.setUint16(2, packet.sequence & 0xffff);
  view.setUint32(4, packet.timestamp >>> 0);
  view.setUint32(8, packet.ssrc >>> 0);
  out.set(payload, rtpHeaderBytes);
  return out;
}

/** Distance from `a` to `b` in 16-bit sequence space (negative when `b` is older). */
export function sequenceDelta(a: number, b: number): number {
  const d = (b - a) & 0xffff;
  return d >= 0x8000 ? d - 0x10000 : d;
}
