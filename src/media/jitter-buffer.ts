// A small reorder buffer for incoming RTP: packets come out in sequence order; a late packet whose
// turn has passed is dropped, duplicates too, and a gap is skipped once `depth` packets wait behind it
// (at 20 ms per packet, depth 3 holds at most 60 ms). A new SSRC (re-INVITE, transfer) starts over.
// The usual packet, the one expected next with nothing waiting, goes straight out: no map, no list.
import { sequenceDelta, type RtpPacket } from "./rtp-packet";

export type Ready = (packet: RtpPacket) => void;

export class JitterBuffer {
  private readonly waiting = new Map<number, RtpPacket>();
  private next: number | null = null;
  private ssrc: number | null = null;
  lost = 0;

  constructor(private readonly depth = 3) {}

  /** Adds a packet; `ready` gets those now ready, in order. */
  push(packet: RtpPacket, ready: Ready) {
    if (packet.ssrc !== this.ssrc) {
      this.ssrc = packet.ssrc;
      this.waiting.clear();
      this.next = packet.sequence;
    }
    const delta = sequenceDelta(this.next!, packet.sequence);
    if (delta < 0) return; // late or duplicate
    if (delta === 0 && this.waiting.size === 0) {
      this.next = (packet.sequence + 1) & 0xffff;
      return ready(packet);
    }
    this.waiting.set(packet.sequence, packet);
    this.drain(ready);
    while (this.waiting.size > this.depth) {
      // give up on the gap: jump to the oldest packet we hold
      let oldest = this.next!;
      let best = Infinity;
      for (const seq of this.waiting.keys()) {
        const d = sequenceDelta(this.next!, seq);
        if (d < best) {
          best = d;
          oldest = seq;
        }
      }
      this.lost += best;
      this.next = oldest;
      this.drain(ready);
    }
  }

  private drain(ready: Ready) {
    for (let p = this.waiting.get(this.next!); p; p = this.waiting.get(this.next!)) {
      this.waiting.delete(this.next!);
      this.next = (this.next! + 1) & 0xffff;
      ready(p);
    }
  }
}
