// When the caller's audio reached the bridge, by its place in the stream: a VAD or a provider that names
// a moment of the stream (ms from its start) is turned into the time the caller said it, whatever the
// VAD's or the provider's lag since. Frames arrive in real time, so a moment inside a frame is that
// frame's arrival minus what followed it in the frame.

// a turn's end is looked up within seconds of it; older arrivals are let go
const keptMs = 30_000;

export class InputTimeline {
  private ends: number[] = [];
  private times: number[] = [];
  private totalMs = 0;
  /** where the first arrival kept begins in the stream */
  private keptFromMs = 0;

  /** `durationMs` more of the caller's audio arrived at `at` (performance.now()). */
  add(durationMs: number, at = performance.now()) {
    this.totalMs += durationMs;
    this.ends.push(this.totalMs);
    this.times.push(at);
    // dropped in batches: a shift per frame would copy the arrays every 20 ms
    if (this.ends.length > 256 && this.ends[128]! < this.totalMs - keptMs) {
      this.keptFromMs = this.ends[127]!;
      this.ends = this.ends.slice(128);
      this.times = this.times.slice(128);
    }
  }

  /** When the audio at `offsetMs` into the stream arrived; null for a moment not arrived or let go. */
  timeOf(offsetMs: number): number | null {
    let low = 0;
    let high = this.ends.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.ends[mid]! < offsetMs) low = mid + 1;
      else high = mid;
    }
    const end = this.ends[low];
    if (end === undefined || offsetMs < this.keptFromMs) return null;
    return this.times[low]! - (end - offsetMs);
  }
}
