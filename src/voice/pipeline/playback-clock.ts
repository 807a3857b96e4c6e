// When the caller hears the agent's audio. The call plays agent audio in order, in real time, from the
// moment the call starts (audio sent before that waits); a barge-in drops what is queued, a pause holds
// it where the caller is in it. Tracking the same here tells which words of an utterance were heard
// when the caller cut in.
import type { Alignment } from "./elevenlabs-tts";

export type Chunk = { startsAt: number; durationMs: number; alignment: Alignment | null };

export class PlaybackClock {
  private live = false;
  private endsAt = 0; // when the audio emitted so far finishes playing (performance.now ms)
  private readonly waiting: Chunk[] = []; // emitted before the call started
  // chunks that may not have played to their end: a resume moves them on by the pause
  private unplayed: Chunk[] = [];
  private pausedAt: number | null = null;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The call started: queued audio begins playing now. */
  start() {
    if (this.live) return;
    this.live = true;
    this.endsAt = this.now();
    for (const chunk of this.waiting.splice(0)) {
      chunk.startsAt = this.endsAt;
      this.endsAt += chunk.durationMs;
      this.unplayed.push(chunk);
    }
  }

  /** Audio of `durationMs` handed to the call now; the chunk's start is filled in once known. */
  add(durationMs: number, alignment: Alignment | null): Chunk {
    const chunk: Chunk = { startsAt: Number.POSITIVE_INFINITY, durationMs, alignment };
    if (!this.live) {
      this.waiting.push(chunk);
      return chunk;
    }
    const at = this.heardUntil();
    chunk.startsAt = Math.max(at, this.endsAt);
    this.endsAt = chunk.startsAt + durationMs;
    this.unplayed = this.unplayed.filter((c) => c.startsAt + c.durationMs > at);
    this.unplayed.push(chunk);
    return chunk;
  }

  /** How far the caller has heard: now, or where a pause holds the audio. */
  heardUntil() {
    return this.pausedAt ?? this.now();
  }

  /** Audio handed over has not all played yet. */
  get playing() {
    return this.live ? this.endsAt > this.heardUntil() : this.waiting.length > 0;
  }

  get paused() {
    return this.pausedAt !== null;
  }

  /** The audio holds where the caller is in it (the call's playout pauses too). */
  pause() {
    if (this.live && this.pausedAt === null) this.pausedAt = this.now();
  }

  /** It goes on: what had not played starts that much later. */
  resume() {
    const pausedAt = this.pausedAt;
    if (pausedAt === null) return;
    this.pausedAt = null;
    const held = this.now() - pausedAt;
    for (const chunk of this.unplayed) if (chunk.startsAt + chunk.durationMs > pausedAt) chunk.startsAt += held;
    if (this.endsAt > pausedAt) this.endsAt += held;
  }

  /** Barge-in: the queue was dropped (a pause ends with it). */
  flush() {
    this.waiting.length = 0;
    this.unplayed = [];
    this.pausedAt = null;
    if (this.live) this.endsAt = this.now();
  }
}

/** The text of `text` the caller heard by `at`: by alignment where the provider sent it, else by share of the audio. */
export function heardText(text: string, chunks: Chunk[], at: number): string {
  if (chunks.length === 0) return "";
  if (chunks.every((c) => c.alignment)) {
    let heard = "";
    for (const chunk of chunks) {
      const { chars, charStartTimesMs } = chunk.alignment!;
      chars.forEach((c, i) => {
        if (chunk.startsAt + (charStartTimesMs[i] ?? 0) < at) heard += c;
      });
    }
    return wholeWords(heard, text);
  }
  const total = chunks.reduce((sum, c) => sum + c.durationMs, 0);
  const played = chunks.reduce((sum, c) => sum + Math.max(0, Math.min(c.durationMs, at - c.startsAt)), 0);
  return wholeWords(text.slice(0, Math.round((text.length * played) / total)), text);
}

/** Cuts a heard prefix back to its last complete word (a word cut in half was not understood). */
function wholeWords(prefix: string, text: string): string {
  const trimmed = prefix.trim();
  if (trimmed.length >= text.trim().length) return text.trim();
  const next = text.trim()[trimmed.length];
  if (next === undefined || /\s/.test(next)) return trimmed;
  return trimmed.replace(/\s*\S*$/, "");
}
