// Whether the websocket thread still holds frames of a connection, told from this side: it sends one
// frame every 20 ms from when it gets one with none held, so the last frame handed over has played by
// `playedBy`. A frame handed over later than that (a reply's first) is due at once.
import { frameMs } from "../media/frame-clock";

export class FramesHeld {
  private playedBy = 0;

  /** A frame is handed over at `now`; true when the thread held none (it is due at once). */
  handOver(now: number): boolean {
    const due = now >= this.playedBy;
    this.playedBy = Math.max(now, this.playedBy) + frameMs;
    return due;
  }

  /** The thread dropped what it held (a barge-in). */
  cleared() {
    this.playedBy = 0;
  }
}
