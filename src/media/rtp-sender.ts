// Sends one RTP packet every 20 ms on the monotonic clock for as long as the call lasts: agent audio
// when there is some, silence otherwise (so peers' media time-outs never fire on a quiet agent).
// Agent frames arrive already paced; one frame of slack absorbs the phase between the two clocks.
// Nothing is allocated per frame: a pushed frame is encoded at once into the payload of one of a ring
// of packet buffers (so the caller may reuse its frame buffer), its header is written when it is due,
// and the buffer is reused once sent: Bun's UDP send hands the bytes to the kernel (sendmmsg) before
// it returns, and the RTCP reporter reads the header at once too.
import { FrameClock, frameMs } from "./frame-clock";
import type { FrameTicker } from "../calls/frame-ticker";
import type { Codec } from "./codecs";
import { frameSamples } from "./codecs";
import { rtpHeaderBytes, writeRtpHeader, type RtpPacket } from "./rtp-packet";

const maxQueuedFrames = 25;

export class RtpSender {
  // the queue: packets with their payload encoded, in a ring, with the time each was pushed
  private readonly ring = Array.from({ length: maxQueuedFrames }, newPacket);
  private readonly pushedAt = new Float64Array(maxQueuedFrames);
  private head = 0;
  private queued = 0;
  private readonly silence = newPacket();
  // the next packet's header, moved on in place
  private readonly header = {
    payloadType: 0,
    marker: true,
    sequence: (Math.random() * 0x10000) & 0xffff,
    timestamp: (Math.random() * 0x100000000) >>> 0,
    ssrc: (Math.random() * 0x100000000) >>> 0,
  };
  private readonly schedule = new FrameClock();
  private playing = false;
  // a pause: queued frames wait, silence goes out
  private held = false;
  packetsSent = 0;
  // relaying: how the other leg's sequence numbers and timestamps map onto ours, and the packet buffer
  private relayShift: { sequence: number; timestamp: number } | null = null;
  private relayed = newPacket();
  /** Frames skipped after stalls of the event loop (never sent; a gap in the sequence numbers). */
  framesSkipped = 0;

  constructor(
    private codec: Codec,
    /** Gets the packet buffer, valid only during the call: it is rewritten for the next packet. */
    private readonly send: (packet: Uint8Array) => void,
    private readonly clock: FrameTicker,
  ) {
    this.header.payloadType = codec.payloadType;
    this.silence.fill(codec.silence, rtpHeaderBytes);
  }

  start() {
    this.schedule.resume(this.clock.now());
    this.clock.add(this.tick);
  }

  stop() {
    this.clock.remove(this.tick);
    this.queued = 0;
  }

  /**
   * Relaying (a bridged transfer): the paced sending stops for good and each packet of the other leg
   * goes out at once, on this stream's SSRC, its sequence number and timestamp shifted to go on from
   * where ours were (the source's gaps and talk spurts kept), the first one marked.
   */
  relay(source: RtpPacket, payloadType: number, payload: Uint8Array) {
    const header = this.header;
    if (!this.relayShift) {
      this.stop();
      header.marker = true;
      this.relayShift = {
        sequence: (header.sequence - source.sequence) & 0xffff,
        timestamp: (header.timestamp - source.timestamp) >>> 0,
      };
    }
    const length = rtpHeaderBytes + payload.length;
    if (this.relayed.length < length) this.relayed = new Uint8Array(length);
    const packet = this.relayed.subarray(0, length);
    writeRtpHeader(packet, {
      payloadType,
      marker: header.marker || source.marker,
      sequence: (source.sequence + this.relayShift.sequence) & 0xffff,
      timestamp: (source.timestamp + this.relayShift.timestamp) >>> 0,
      ssrc: header.ssrc,
    });
    header.marker = false;
    packet.set(payload, rtpHeaderBytes);
    this.send(packet);
    this.packetsSent++;
  }

  /** A re-INVITE changed the codec: frames queued in the old one are dropped (a frame or two of slack). */
  setCodec(codec: Codec) {
    if (codec.payloadType !== this.codec.payloadType) this.flush();
    this.codec = codec;
    this.header.payloadType = codec.payloadType;
    this.silence.fill(codec.silence, rtpHeaderBytes);
  }

  /** A 20 ms frame of agent audio (8 kHz) at `from` in `pcm`, encoded now: the samples are not kept. */
  push(pcm: Int16Array, from = 0) {
    if (this.queued === maxQueuedFrames) this.dropHead();
    const slot = (this.head + this.queued) % maxQueuedFrames;
    this.codec.encodeInto(pcm, this.ring[slot]!, rtpHeaderBytes, from, frameSamples);
    this.pushedAt[slot] = this.clock.now();
    this.queued++;
  }

  /** Barge-in: what is queued is dropped, and the next packet marks a new talk spurt (a pause ends). */
  flush() {
    this.queued = 0;
    this.playing = false;
    this.held = false;
    this.header.marker = true;
  }

  /** A pause (true): what is queued waits, silence goes out; released (false), it goes on as a new talk spurt. */
  hold(held: boolean) {
    if (held) this.playing = false;
    else if (this.held) this.header.marker = true;
    this.held = held;
  }

  private dropHead() {
    this.head = (this.head + 1) % maxQueuedFrames;
    this.queued--;
  }

  private readonly tick = (now: number) => {
    const header = this.header;
    // after a stall, the timestamp and the sequence number both move past the frames never sent, so
    // the receiver counts them as lost (RFC 3550)
    const skipped = this.schedule.skipStall(now);
    if (skipped > 0) {
      header.timestamp = (header.timestamp + skipped * frameSamples) >>> 0;
      header.sequence = (header.sequence + skipped) & 0xffff;
      this.framesSkipped += skipped;
      header.marker = true;
    }
    for (; this.schedule.due(now); this.schedule.advance()) {
      const packet = this.nextPacket(now);
      writeRtpHeader(packet, header);
      this.send(packet);
      header.marker = false;
      header.sequence = (header.sequence + 1) & 0xffff;
      header.timestamp = (header.timestamp + frameSamples) >>> 0;
      this.packetsSent++;
    }
  };

  /** The next queued frame once a frame of slack has built up, else silence. */
  private nextPacket(now: number): Uint8Array {
    if (this.held) return this.silence;
    if (!this.playing && this.queued > 0 && now - this.pushedAt[this.head]! >= frameMs) this.playing = true;
    if (this.playing && this.queued > 0) {
      const packet = this.ring[this.head]!;
      this.dropHead(); // its slot is written again only by a later push, after this send
      return packet;
    }
    this.playing = false; // the agent stopped (or under-ran): wait for a frame of slack again
    return this.silence;
  }
}

function newPacket() {
  return new Uint8Array(rtpHeaderBytes + frameSamples);
}
