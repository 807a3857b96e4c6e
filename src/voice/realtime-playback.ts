// What the caller has heard of a realtime provider's audio. The call plays agent audio in order, in real
// time, from the call's start, and drops what is queued on barge-in; the provider sends it faster than
// that. Tracking the playback here lets the adapter tell the provider how much of an item was heard
// (conversation.item.truncate), keep only that text, and hold an item's final transcript and the end of
// a response until their audio has played, so nothing unheard is reported as said.
import { type Chunk, heardText, PlaybackClock } from "./pipeline/playback-clock";

/** `emit` gets whether the caller cut off the audio it waited for */
type Held = { chunk: Chunk | null; emit: (cut: boolean) => void; final: { itemId: string; text: string } | null };
/** `heard`: the words heard ("" for none); null when the item's text was reported before the call started. */
export type Cut = { itemId: string; audioEndMs: number; heard: string | null };

export class RealtimePlayback {
  private readonly clock = new PlaybackClock();
  private playing: { itemId: string; chunks: Chunk[] } | null = null;
  private last: Chunk | null = null;
  private held: Held[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly cutItems = new Set<string>();
  // items whose final went out before the call started (nothing plays yet): their text cannot be cut
  private readonly reportedEarly = new Set<string>();
  private started = false;

  /** The call started (its first caller audio): agent audio queued so far begins to play. */
  start() {
    this.started = true;
    this.clock.start();
  }

  /** Agent audio of `itemId` handed to the call now; false for the tail of an item already cut. */
  audio(itemId: string, durationMs: number): boolean {
    if (this.cutItems.has(itemId)) return false;
    if (this.playing?.itemId !== itemId) this.playing = { itemId, chunks: [] };
    this.last = this.clock.add(durationMs, null);
    this.playing.chunks.push(this.last);
    return true;
  }

  /** Agent audio handed over has not all played yet. */
  get audible() {
    return this.clock.playing;
  }

  isCut(itemId: string) {
    return this.cutItems.has(itemId);
  }

  /**
   * Runs `emit` once the audio handed over so far has played; `final` marks an item's final transcript.
   * Before the call has started nothing is playing yet: it runs at once.
   */
  afterPlayed(emit: Held["emit"], final: Held["final"] = null) {
    if (!this.started) {
      if (final) this.reportedEarly.add(final.itemId);
      return emit(false);
    }
    this.held.push({ chunk: this.last, emit, final });
    this.schedule();
  }

  /**
   * The caller cut in: the item being played is cut where they stopped hearing it (no cut when it had
   * played whole). Returns the cut and what was held, to be emitted now, minus the cut item's final.
   */
  bargeIn(partialText: (itemId: string) => string): { cut: Cut | null; release: (() => void)[] } {
    const now = performance.now();
    const item = this.playing;
    this.playing = null;
    const held = this.held;
    this.held = [];
    this.clearTimer();
    let cut: Cut | null = null;
    if (item) {
      const total = item.chunks.reduce((sum, c) => sum + c.durationMs, 0);
      const played = item.chunks.reduce((sum, c) => sum + Math.max(0, Math.min(c.durationMs, now - c.startsAt)), 0);
      if (played < total) {
        this.cutItems.add(item.itemId);
        const text = held.find((h) => h.final?.itemId === item.itemId)?.final?.text ?? partialText(item.itemId);
        const heard = this.reportedEarly.has(item.itemId) ? null : heardText(text, item.chunks, now);
        cut = { itemId: item.itemId, audioEndMs: Math.floor(played), heard };
      }
    }
    this.clock.flush();
    return {
      cut,
      release: held.filter((h) => !cut || h.final?.itemId !== cut.itemId).map((h) => () => h.emit(cut !== null)),
    };
  }

  stop() {
    this.held = [];
    this.clearTimer();
  }

  private schedule() {
    if (this.timer) return;
    const now = performance.now();
    while (this.held.length > 0) {
      const head = this.held[0]!;
      const remaining = head.chunk ? head.chunk.startsAt + head.chunk.durationMs - now : 0;
      if (remaining > 0) {
        this.timer = setTimeout(() => this.onTimer(), remaining);
        return;
      }
      this.held.shift();
      head.emit(false);
    }
  }

  private onTimer() {
    this.timer = null;
    this.schedule();
  }

  private clearTimer() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
