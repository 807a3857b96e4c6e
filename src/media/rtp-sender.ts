// Sends one RTP packet every 20 ms on the monotonic clock for as long as the call lasts: agent audio
// when there is some, silence otherwise (so peers' media time-outs never fire on a quiet agent).
// Agent frames arrive already paced; one frame of slack absorbs the phase between the two clocks.
import type { FrameTicker } from "../calls/frame-ticker";
import type { Codec } from "./codecs";
import { frameSamples } from "./codecs";
import { buildRtp } from "./rtp-packet";

const frameMs = 20;
// after an event-loop stall, skip ahead rather than burst the backlog: the timestamp and the sequence
// number both move past the frames never sent, so the receiver counts them as lost (RFC 3550)
const maxLagMs = 100;
const maxQueuedFrames = 25;

export class RtpSender {
  private readonly queue: { frame: Int16Array; at: number }[] = [];
  private readonly ssrc = (Math.random() * 0x100000000) >>> 0;
  private sequence = (Math.random() * 0x10000) & 0xffff;
  private timestamp = (Math.random() * 0x100000000) >>> 0;
  private nextDue = 0;
  private marker = true;
  private playing = false;
  private silence: Uint8Array;
  packetsSent = 0;
  /** Frames skipped after stalls of the event loop (never sent; a gap in the sequence numbers). */
  framesSkipped = 0;

  constructor(
    private codec: Codec,
    private readonly send: (packet: Uint8Array) => void,
    private readonly clock: FrameTicker,
  ) {
    this.silence = new Uint8Array(frameSamples).fill(codec.silence);
  }

  start() {
    this.nextDue = this.clock.now();
    this.clock.add(this.tick);
  }

  stop() {
    this.clock.remove(this.tick);
    this.queue.length = 0;
  }

  setCodec(codec: Codec) {
    this.codec = codec;
    this.silence = new Uint8Array(frameSamples).fill(codec.silence);
  }

  /** A 20 ms frame of agent audio (8 kHz). */
  push(frame: Int16Array) {
    if (this.queue.length >= maxQueuedFrames) this.queue.shift();
    this.queue.push({ frame, at: this.clock.now() });
  }

  /** Barge-in: what is queued is dropped, and the next packet marks a new talk spurt. */
  flush() {
    this.queue.length = 0;
    this.playing = false;
    this.marker = true;
  }

  private readonly tick = (now: number) => {
    if (now - this.nextDue > maxLagMs) {
      const skipped = Math.floor((now - this.nextDue) / frameMs);
      this.timestamp = (this.timestamp + skipped * frameSamples) >>> 0;
      this.sequence = (this.sequence + skipped) & 0xffff;
      this.framesSkipped += skipped;
      this.nextDue += skipped * frameMs;
      this.marker = true;
    }
    while (this.nextDue <= now) {
      this.send(this.next(now));
      this.nextDue += frameMs;
    }
  };

  private next(now: number): Uint8Array {
    const head = this.queue[0];
    if (!this.playing && head && now - head.at >= frameMs) this.playing = true;
    let payload = this.silence;
    if (this.playing) {
      const item = this.queue.shift();
      if (item) payload = this.codec.encode(item.frame);
      else this.playing = false; // the agent stopped (or under-ran): wait for a frame of slack again
    }
    const packet = buildRtp(
      {
        payloadType: this.codec.payloadType,
        marker: this.marker,
        sequence: this.sequence,
        timestamp: this.timestamp,
        ssrc: this.ssrc,
      },
      payload,
    );
    this.marker = false;
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + frameSamples) >>> 0;
    this.packetsSent++;
    return packet;
  }
}
