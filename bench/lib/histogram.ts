// Timing samples counted in fixed buckets (0.05 ms wide up to 2 s, then one for anything later), so that
// adding one costs O(1) and a percentile needs no sort: a bench that timestamps packets on its own event
// loop must not stall that loop sorting, or collecting, arrays of millions of samples, since the stall
// shows up as jitter it then blames on the peer.
const bucketMs = 0.05;
const buckets = 2000 / bucketMs;

export class Histogram {
  private readonly counts = new Uint32Array(buckets + 1);
  count = 0;
  max = 0;

  add(ms: number) {
    this.counts[Math.min(buckets, Math.floor(ms / bucketMs))]!++;
    this.count++;
    if (ms > this.max) this.max = ms;
  }

  /** The sample at rank p% (as harness.ts's `percentile`), to the bucket's upper edge; 100 is the max. */
  percentile(p: number): number {
    if (this.count === 0) return 0;
    if (p >= 100) return this.max;
    const rank = Math.min(this.count - 1, Math.floor((p / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!;
      if (seen > rank) return Math.min(this.max, (i + 1) * bucketMs);
    }
    return this.max;
  }
}
