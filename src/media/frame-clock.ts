// The due time of one stream's next 20 ms frame on the monotonic clock: what every pacer of the bridge
// shares (the agent's playout, the hold tone, RTP senders, the websocket thread's connections).
export const frameMs = 20;
// after a stall of the loop that paces, skip ahead rather than burst the backlog at the peer
const maxLagMs = 100;

export class FrameClock {
  private nextDue = 0;

  /** Starts, or goes on after an idle spell: never earlier than a frame after the last one. */
  resume(now: number) {
    this.nextDue = Math.max(this.nextDue, now);
  }

  /** After a stall longer than maxLagMs, moves past the whole frames missed; returns how many (else 0). */
  skipStall(now: number): number {
    if (now - this.nextDue <= maxLagMs) return 0;
    const skipped = Math.floor((now - this.nextDue) / frameMs);
    this.nextDue += skipped * frameMs;
    return skipped;
  }

  /** Whether the next frame is due by `now + leadMs`. */
  due(now: number, leadMs = 0) {
    return this.nextDue <= now + leadMs;
  }

  /** How long after `now` the next frame plays (negative: it is late). */
  until(now: number) {
    return this.nextDue - now;
  }

  /** The next frame went. */
  advance() {
    this.nextDue += frameMs;
  }

  /** A pause of `ms`: what was due goes that much later. */
  postpone(ms: number) {
    this.nextDue += ms;
  }
}
