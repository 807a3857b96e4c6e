// What the caller hears while the assistant briefs the human of a warm transfer: a soft 440 Hz tone,
// one second on and one off, one 20 ms frame at a time on the call's ticker (the transport paces
// frames handed to it up to its lead early, as it does the agent's).
import { FrameClock, frameMs } from "../media/frame-clock";
import type { FrameTicker } from "./frame-ticker";

const hz = 440;
const amplitude = 2000;
const onFrames = 50;
const periodFrames = 100;

export class HoldTone {
  private readonly frame: Int16Array;
  private readonly clock = new FrameClock();
  private index = 0;

  constructor(
    private readonly sampleRate: number,
    private readonly play: (frame: Int16Array) => void,
    private readonly ticker: FrameTicker,
  ) {
    this.frame = new Int16Array((sampleRate * frameMs) / 1000);
  }

  start() {
    this.clock.resume(this.ticker.now());
    this.ticker.add(this.tick);
  }

  stop() {
    this.ticker.remove(this.tick);
  }

  private readonly tick = (now: number) => {
    this.clock.skipStall(now);
    for (; this.clock.due(now); this.clock.advance()) this.play(this.next());
  };

  private next(): Int16Array {
    const n = this.frame.length;
    const on = this.index % periodFrames < onFrames;
    for (let i = 0; i < n; i++) {
      const t = this.index * n + i;
      this.frame[i] = on ? Math.round(amplitude * Math.sin((2 * Math.PI * hz * t) / this.sampleRate)) : 0;
    }
    this.index++;
    return this.frame;
  }
}
