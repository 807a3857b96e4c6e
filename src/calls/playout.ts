// Agent audio arrives faster than real time; the caller must get it as 20 ms frames at the pace it
// plays, so that a barge-in can drop what has not been heard yet and a pause (the caller may be
// cutting in) can hold it where it is. Each frame is cut into a buffer the playout reuses: whoever
// gets a frame uses it during the call (encodes, mixes, sends a copy).
// A transport that paces frames itself (SIP media on the media thread, the websocket thread) takes
// them `leadMs` early, so a stall of this event loop shorter than that is not heard; a pause holds
// those there too (the call pauses the transport with the playout), so the frames handed over and not
// played yet play that much later. `heard` gets each frame as it plays (the recording's agent side).
// Frames handed over after the caller should have heard them are counted
// (vas_media_late_frames_total): a gap in the agent's speech.
import { recordLateFrames } from "../metrics/metrics";
import { FrameClock, frameMs } from "../media/frame-clock";
import type { FrameTicker } from "./frame-ticker";

/** A frame handed over: its buffer, how much of it is audio (a tail is padded), when it plays. */
type Sent = { frame: Int16Array; samples: number; playsAt: number };

export class Playout {
  private queue: Int16Array[] = [];
  private offset = 0; // samples of queue[0] already played
  private queued = 0;
  private readonly clock = new FrameClock();
  private running = false;
  private live = false;
  /** since when the audio is held (null: it plays) */
  private pausedAt: number | null = null;
  private drainWaiters: (() => void)[] = [];
  /** told when the first frame holding their audio goes to the transport (by the pushed array) */
  private onSent = new Map<Int16Array, (sentAt: number) => void>();
  private sentNow: ((sentAt: number) => void)[] = [];
  readonly frameSamples: number;
  // a ring of the frames handed over: the last `unheard` before `next` have not played yet (at most
  // the lead's worth, so the ring is that plus two)
  private readonly sent: Sent[];
  private next = 0;
  private unheard = 0;
  /** 20 ms frames of the agent's speech heard late or not at all because this event loop was late. */
  lateFrames = 0;

  constructor(
    sampleRate: number,
    /** `aheadMs`: how long before its play time the frame is handed over (up to the lead) */
    private readonly play: (frame: Int16Array, aheadMs: number) => void,
    private readonly ticker: FrameTicker,
    private readonly leadMs = 0,
    /** each frame as it plays (the recording's agent side) */
    private readonly heard: (frame: Int16Array) => void = () => {},
  ) {
    this.frameSamples = (sampleRate * frameMs) / 1000;
    this.sent = Array.from({ length: Math.ceil(leadMs / frameMs) + 2 }, () => ({
      frame: new Int16Array(this.frameSamples),
      samples: 0,
      playsAt: 0,
    }));
  }

  /** Audio is held until the call is live, then played from the start of the queue. */
  start() {
    this.live = true;
    this.schedule();
  }

  /** `onSent` gets the moment (performance.now()) the first frame holding these samples is sent to the caller. */
  push(samples: Int16Array, onSent: ((sentAt: number) => void) | null = null) {
    if (samples.length === 0) return;
    this.queue.push(samples);
    if (onSent) this.onSent.set(samples, onSent);
    this.queued += samples.length;
    this.schedule();
  }

  /** Drops everything not yet played (barge-in); a pause ends with it. */
  flush() {
    this.queue = [];
    this.offset = 0;
    this.queued = 0;
    this.onSent.clear();
    this.unheard = 0;
    this.pausedAt = null;
    this.idle();
  }

  /** Holds the audio where the caller is in it (the transport holds what it was handed: pauseAudio). */
  pause() {
    if (this.pausedAt !== null) return;
    this.pausedAt = this.ticker.now();
    this.hearUpTo(this.pausedAt);
    if (this.running) {
      this.running = false;
      this.ticker.remove(this.tick);
    }
  }

  /** Goes on from where the pause held the audio: what had not played plays that much later. */
  resume() {
    if (this.pausedAt === null) return;
    const heldMs = this.ticker.now() - this.pausedAt;
    this.pausedAt = null;
    const ring = this.sent.length;
    for (let k = this.unheard; k > 0; k--) this.sent[(this.next - k + ring) % ring]!.playsAt += heldMs;
    this.clock.postpone(heldMs);
    this.schedule();
  }

  stop() {
    this.live = false;
    this.flush();
  }

  /** Milliseconds of audio queued but not played yet. */
  get queuedMs() {
    return (this.queued / this.frameSamples) * frameMs;
  }

  whenDrained(fn: () => void) {
    if (this.queued === 0 && this.unheard === 0) fn();
    else this.drainWaiters.push(fn);
  }

  private schedule() {
    if (!this.live || this.pausedAt !== null || this.running || this.queued + this.unheard === 0) return;
    this.running = true;
    // never earlier than one frame after the last one: an underrun must not squeeze two frames together
    const now = this.ticker.now();
    this.clock.resume(now);
    this.ticker.add(this.tick);
    this.tick(now); // what is due goes now (a reply's first frame), not at the next tick
  }

  private readonly tick = (now: number) => {
    let late = this.clock.skipStall(now); // the gap, in frames
    this.hearUpTo(now);
    while (this.queued > 0 && this.clock.due(now, this.leadMs)) {
      const ahead = this.clock.until(now);
      // the transport plays a frame a frame after it is due (its slack against our clock)
      if (ahead < -frameMs) late++;
      const sent = this.take();
      sent.playsAt = now + ahead;
      this.unheard++;
      this.play(sent.frame, Math.max(0, ahead));
      // a transport that paces frames itself sends this one when it is due
      for (const told of this.sentNow.splice(0)) told(now + Math.max(0, ahead));
      this.clock.advance();
      this.hearUpTo(now);
    }
    if (late > 0) {
      this.lateFrames += late;
      recordLateFrames(late);
    }
    // with a lead, the last frame handed over plays after this (and a frame long)
    if (this.queued === 0 && this.unheard === 0) this.idle(this.leadMs > 0 ? frameMs : 0);
  };

  /** Each frame handed over whose time has come is heard, in order. */
  private hearUpTo(now: number) {
    const ring = this.sent.length;
    while (this.unheard > 0) {
      const oldest = this.sent[(this.next - this.unheard + ring) % ring]!;
      if (oldest.playsAt > now) return;
      this.unheard--;
      this.heard(oldest.frame);
    }
  }

  private take(): Sent {
    const sent = this.sent[this.next]!;
    this.next = (this.next + 1) % this.sent.length;
    const frame = sent.frame;
    let filled = 0;
    while (filled < frame.length && this.queue.length > 0) {
      const head = this.queue[0]!; // queue.length > 0
      if (this.offset === 0 && this.onSent.size > 0) this.markSent(head);
      const n = Math.min(frame.length - filled, head.length - this.offset);
      for (let k = 0; k < n; k++) frame[filled + k] = head[this.offset + k]!; // (a subarray would allocate)
      filled += n;
      this.offset += n;
      if (this.offset === head.length) {
        this.queue.shift();
        this.offset = 0;
      }
    }
    frame.fill(0, filled); // the tail of a response is padded with silence
    this.queued -= filled;
    sent.samples = filled;
    return sent;
  }

  private markSent(head: Int16Array) {
    const told = this.onSent.get(head);
    if (!told) return;
    this.onSent.delete(head);
    this.sentNow.push(told);
  }

  private idle(drainedInMs = 0) {
    if (this.running) {
      this.running = false;
      this.ticker.remove(this.tick);
    }
    const waiters = this.drainWaiters.splice(0);
    const wake = () => {
      for (const fn of waiters) fn();
    };
    if (waiters.length === 0) return;
    if (drainedInMs === 0) wake();
    else setTimeout(wake, drainedInMs);
  }
}
