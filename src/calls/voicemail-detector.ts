// Human or answering machine, from the first seconds of an answered call's audio (pure: PCM in,
// decisions out). A person answers short ("Hello?") and waits; a machine's greeting talks on without a
// pause, and many end with a beep. After a machine, it also says when a message may start: once the
// beep has ended, or (no beep) after 1 s of silence following the greeting. Rules and timings follow
// Asterisk's AMD (greeting length, silence after it), plus a Goertzel beep check; the measured accuracy
// is in docs/outbound.md (`bun run bench voicemail`).
import { rms } from "../audio/pcm";
import { strongestTone } from "../audio/tone-frame";

export type VoicemailEvent =
  | { type: "human"; reason: "short-answer" | "no-speech"; atMs: number }
  | { type: "machine"; reason: "beep" | "long-greeting"; atMs: number }
  /** machine only: the beep (or the greeting) is over, a message is heard from now on */
  | { type: "message-ready"; atMs: number };

export type VoicemailTimings = {
  /** speech that goes on this long without a pause is a greeting */
  greetingMs: number;
  /** a pause this long after a short answer: a person waiting for us */
  humanSilenceMs: number;
  /** a pause shorter than this is between words (the greeting goes on) */
  wordGapMs: number;
  /** nothing said for this long: treated as a person (the call goes on) */
  noSpeechMs: number;
  /** a tone this long in the beep band is a beep */
  beepMs: number;
  /** no beep: this much silence after the greeting before a message */
  messageSilenceMs: number;
  /** a machine whose greeting never ends gets its message after this long anyway */
  messageMaxWaitMs: number;
};

export const defaultVoicemailTimings: VoicemailTimings = {
  greetingMs: 2200,
  humanSilenceMs: 700,
  wordGapMs: 700,
  noSpeechMs: 5000,
  beepMs: 200,
  messageSilenceMs: 1000,
  messageMaxWaitMs: 30_000,
};

// speech on a phone line is well above this (PCM16 RMS), line and comfort noise below (as greet-on-silence)
const soundRms = 500;
// a beep frame: this much of its energy in one frequency of the band, that frequency steady
const tonePurity = 0.6;
const toneDriftHz = 60;
const frameMs = 20;

export class VoicemailDetector {
  private readonly frame: Int16Array;
  private filled = 0;
  private nowMs = 0;
  private decided: "human" | "machine" | null = null;
  private ready = false;
  private speechStartMs: number | null = null;
  private lastSoundMs: number | null = null;
  private toneHz = 0;
  private toneFrames = 0;
  private beepHeard = false;
  private beepEndedMs: number | null = null;

  constructor(
    private readonly sampleRate: number,
    private readonly timings: VoicemailTimings = defaultVoicemailTimings,
  ) {
    this.frame = new Int16Array((sampleRate * frameMs) / 1000);
  }

  /** true once nothing more will come (a person, or a machine ready for the message) */
  get finished() {
    return this.decided === "human" || this.ready;
  }

  /** Callee audio (PCM16 at the call's rate) in any chunk size; the events it led to, in order. */
  feed(samples: Int16Array): VoicemailEvent[] {
    const events: VoicemailEvent[] = [];
    for (let i = 0; i < samples.length && !this.finished; ) {
      const take = Math.min(samples.length - i, this.frame.length - this.filled);
      this.frame.set(samples.subarray(i, i + take), this.filled);
      this.filled += take;
      i += take;
      if (this.filled < this.frame.length) break;
      this.filled = 0;
      this.nowMs += frameMs;
      this.onFrame(this.frame, events);
    }
    return events;
  }

  private onFrame(frame: Int16Array, events: VoicemailEvent[]) {
    const now = this.nowMs;
    const loud = rms(frame) >= soundRms;
    const tone = loud ? strongestTone(frame, this.sampleRate) : null;
    const toneFrame = tone !== null && tone.purity >= tonePurity;
    if (toneFrame && this.toneFrames > 0 && Math.abs(tone.hz - this.toneHz) <= toneDriftHz) this.toneFrames++;
    else if (toneFrame) {
      this.toneFrames = 1;
      this.toneHz = tone.hz;
    } else {
      if (this.beepHeard && this.beepEndedMs === null && this.toneFrames > 0) this.beepEndedMs = now;
      this.toneFrames = 0;
    }
    if (this.toneFrames * frameMs >= this.timings.beepMs) this.beepHeard = true;

    if (loud && !toneFrame) {
      // a word: a new utterance after a pause longer than a word gap (before a decision: the first one)
      if (this.speechStartMs === null) this.speechStartMs = now - frameMs;
      this.lastSoundMs = now;
    }
    if (this.decided === null) this.decide(now, events);
    if (this.decided === "machine" && !this.ready) this.awaitMessage(now, events);
  }

  private decide(now: number, events: VoicemailEvent[]) {
    const t = this.timings;
    if (this.beepHeard) return this.settle(events, { type: "machine", reason: "beep", atMs: now });
    if (this.speechStartMs === null) {
      if (now >= t.noSpeechMs) this.settle(events, { type: "human", reason: "no-speech", atMs: now });
      return;
    }
    const quietMs = now - this.lastSoundMs!;
    const spokeMs = this.lastSoundMs! - this.speechStartMs;
    if (quietMs >= t.humanSilenceMs && spokeMs < t.greetingMs)
      return this.settle(events, { type: "human", reason: "short-answer", atMs: now });
    if (quietMs < t.wordGapMs && spokeMs >= t.greetingMs)
      this.settle(events, { type: "machine", reason: "long-greeting", atMs: now });
  }

  private settle(events: VoicemailEvent[], event: VoicemailEvent & { type: "human" | "machine" }) {
    this.decided = event.type;
    events.push(event);
  }

  private awaitMessage(now: number, events: VoicemailEvent[]) {
    const t = this.timings;
    const afterBeep = this.beepEndedMs !== null;
    const afterGreeting =
      !this.beepHeard &&
      this.toneFrames === 0 &&
      this.lastSoundMs !== null &&
      now - this.lastSoundMs >= t.messageSilenceMs;
    if (afterBeep || afterGreeting || now >= t.messageMaxWaitMs) {
      this.ready = true;
      events.push({ type: "message-ready", atMs: now });
    }
  }
}
