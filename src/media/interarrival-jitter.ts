// RFC 3550 (6.4.1) interarrival jitter: the smoothed variation of packet transit time, kept in RTP
// timestamp units and reported in milliseconds.
export class InterarrivalJitter {
  private lastTransit: number | null = null;
  private jitter = 0;

  constructor(private readonly clockRate: number) {}

  /** One packet's RTP timestamp and its arrival time (ms, monotonic). */
  add(rtpTimestamp: number, arrivalMs: number) {
    const transit = (arrivalMs * this.clockRate) / 1000 - rtpTimestamp;
    if (this.lastTransit !== null) {
      // timestamps wrap at 2^32; a difference that large is a wrap, not a delay
      let d = Math.abs(transit - this.lastTransit);
      if (d > 2 ** 31) d = Math.abs(d - 2 ** 32);
      this.jitter += (d - this.jitter) / 16;
    }
    this.lastTransit = transit;
  }

  get ms() {
    return (this.jitter * 1000) / this.clockRate;
  }
}
