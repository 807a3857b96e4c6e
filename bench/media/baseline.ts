// The media path as it was before the per-frame work was cut (commit 13cf8f4), kept only so that
// bench/media measures the old and the new path side by side in one run: a new frame per playout
// tick, a queued {frame, at} per agent frame, a new payload and a new packet (and a DataView) per RTP
// packet sent, a DataView per packet parsed, an array per jitter-buffer push, and the caller's
// mu-law decoded and encoded again for the provider.
import { muLawEncode } from "../../src/audio/g711";
import type { FrameTicker } from "../../src/calls/frame-ticker";
import { type RtpPacket, sequenceDelta } from "../../src/media/rtp-packet";

const frameMs = 20;
const frameSamples = 160;
const maxLagMs = 100;

export class OldPlayout {
  private queue: Int16Array[] = [];
  private offset = 0;
  private queued = 0;
  private nextDue = 0;
  private running = false;

  constructor(
    private readonly play: (frame: Int16Array) => void,
    private readonly ticker: FrameTicker,
  ) {}

  push(samples: Int16Array) {
    this.queue.push(samples);
    this.queued += samples.length;
    if (this.running) return;
    this.running = true;
    this.nextDue = Math.max(this.nextDue, this.ticker.now());
    this.ticker.add(this.tick);
  }

  private readonly tick = (now: number) => {
    if (now - this.nextDue > maxLagMs) this.nextDue = now;
    while (this.queued > 0 && this.nextDue <= now) {
      this.play(this.take());
      this.nextDue += frameMs;
    }
    if (this.queued === 0) {
      this.running = false;
      this.ticker.remove(this.tick);
    }
  };

  private take(): Int16Array {
    const frame = new Int16Array(frameSamples);
    let filled = 0;
    while (filled < frame.length && this.queue.length > 0) {
      const head = this.queue[0]!;
      const n = Math.min(frame.length - filled, head.length - this.offset);
      frame.set(head.subarray(this.offset, this.offset + n), filled);
      filled += n;
      this.offset += n;
      if (this.offset === head.length) {
        this.queue.shift();
        this.offset = 0;
      }
    }
    this.queued -= filled;
    return frame;
  }
}

function oldBuildRtp(packet: Omit<RtpPacket, "payload">, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + payload.length);
  const view = new DataView(out.buffer);
  out[0] = 0x80;
  out[1] = (packet.marker ? 0x80 : 0) | (packet.payloadType & 0x7f);
  view.setUint16(2, packet.sequence & 0xffff);
  view.setUint32(4, packet.timestamp >>> 0);
  view.setUint32(8, packet.ssrc >>> 0);
  out.set(payload, 12);
  return out;
}

export function oldParseRtp(data: Uint8Array): RtpPacket | null {
  const [first = 0, second = 0] = data;
  if (data.length < 12 || first >> 6 !== 2) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let start = 12 + (first & 0x0f) * 4;
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

/** What the RTCP reporter did with each packet sent. */
export function oldRtcpSent(packet: Uint8Array) {
  const view = new DataView(packet.buffer, packet.byteOffset, packet.byteLength);
  return view.getUint32(4) ^ view.getUint32(8);
}

export class OldRtpSender {
  private readonly queue: { frame: Int16Array; at: number }[] = [];
  private readonly silence = new Uint8Array(frameSamples).fill(0xff);
  private sequence = 0;
  private timestamp = 0;
  private nextDue = 0;
  private marker = true;
  private playing = false;

  constructor(
    private readonly send: (packet: Uint8Array) => void,
    private readonly clock: FrameTicker,
  ) {}

  start() {
    this.nextDue = this.clock.now();
    this.clock.add(this.tick);
  }

  push(frame: Int16Array) {
    if (this.queue.length >= 25) this.queue.shift();
    this.queue.push({ frame, at: this.clock.now() });
  }

  private readonly tick = (now: number) => {
    while (this.nextDue <= now) {
      this.send(this.next(now));
      this.nextDue += frameMs;
    }
  };

  private next(now: number): Uint8Array {
    const head = this.queue[0];
    if (!this.playing && head && now - head.at >= frameMs) this.playing = true;
    let payload: Uint8Array = this.silence;
    if (this.playing) {
      const item = this.queue.shift();
      if (item) payload = muLawEncode(item.frame);
      else this.playing = false;
    }
    const packet = oldBuildRtp(
      { payloadType: 0, marker: this.marker, sequence: this.sequence, timestamp: this.timestamp, ssrc: 1 },
      payload,
    );
    this.marker = false;
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + frameSamples) >>> 0;
    return packet;
  }
}

export class OldJitterBuffer {
  private readonly waiting = new Map<number, RtpPacket>();
  private next: number | null = null;
  private ssrc: number | null = null;

  push(packet: RtpPacket): RtpPacket[] {
    if (packet.ssrc !== this.ssrc) {
      this.ssrc = packet.ssrc;
      this.waiting.clear();
      this.next = packet.sequence;
    }
    if (sequenceDelta(this.next!, packet.sequence) < 0) return [];
    this.waiting.set(packet.sequence, packet);
    const ready: RtpPacket[] = [];
    for (let p = this.waiting.get(this.next!); p; p = this.waiting.get(this.next!)) {
      this.waiting.delete(this.next!);
      ready.push(p);
      this.next = (this.next! + 1) & 0xffff;
    }
    return ready;
  }
}

/** The caller's frame, decoded by the RTP session, to an 8 kHz g711_ulaw provider: encoded again by the adapter. */
export const oldToProvider = (pcm: Int16Array) => Buffer.from(muLawEncode(pcm)).toString("base64");
