// The simulated caller's line (src/testing/audio-caller.ts): frames go out in real time, and the end
// of the caller's words is when the utterance's last frame with speech in it was due to go out, not
// the end of the quiet the TTS padded it with, nor a late timer's catch-up burst.
import { expect, test } from "bun:test";
import { CallerLine } from "../../src/testing/audio-caller";

const FRAME = 320; // 20 ms at 16 kHz
const frames = (n: number, level: number) => new Int16Array(n * FRAME).fill(level);

/** A line whose frames are recorded as they go out: when, and whether loud. */
function recordingLine() {
  const sent: { at: number; loud: boolean }[] = [];
  const line = new CallerLine((frame) => {
    const samples = new Int16Array(frame.buffer, frame.byteOffset, frame.byteLength / 2);
    sent.push({ at: performance.now(), loud: samples.some((x) => x > 64) });
  });
  return { sent, line };
}

test("the voice's end is when its last voiced frame was due, before the padding's quiet", async () => {
  const { sent, line } = recordingLine();
  try {
    // 5 frames of speech, then 10 frames (200 ms) of the TTS's quiet
    const spoken = line.speak(new Int16Array([...frames(5, 2000), ...frames(10, 0)]));
    expect(line.voiceEndedAt).toBeNull();
    await spoken;
    const last = sent.findLastIndex((f) => f.loud);
    expect(sent.filter((f) => f.loud)).toHaveLength(5);
    // no later than the last voiced frame went, and 10 quiet frames (200 ms) of schedule before the last
    expect(line.voiceEndedAt!).toBeLessThanOrEqual(sent[last]!.at);
    expect(sent.at(-1)!.at - line.voiceEndedAt!).toBeGreaterThanOrEqual(199);
    // a new utterance starts without an end until its own voice has gone out
    const again = line.speak(frames(3, 2000));
    expect(line.voiceEndedAt).toBeNull();
    await again;
    expect(line.voiceEndedAt!).toBeLessThanOrEqual(sent.findLast((f) => f.loud)!.at);
    expect(line.voiceEndedAt!).toBeGreaterThan(sent[last]!.at);
  } finally {
    line.stop();
  }
});

test("a late timer does not move the voice's end: it is the schedule's, not the catch-up burst's", async () => {
  const { sent, line } = recordingLine();
  try {
    const spoken = line.speak(new Int16Array([...frames(5, 2000), ...frames(20, 0)]));
    // the event loop stalls 250 ms: the 5 voiced frames (due by 80 ms) and the quiet due by then go out
    // together once the timer runs again
    const until = performance.now() + 250;
    while (performance.now() < until);
    await spoken;
    const last = sent.findLastIndex((f) => f.loud);
    expect(sent[last]!.at - sent[0]!.at).toBeLessThan(20); // one burst
    // the last voiced frame was due 80 ms after the line started, the burst went at about 250 ms
    expect(sent[last]!.at - line.voiceEndedAt!).toBeGreaterThan(100);
  } finally {
    line.stop();
  }
});
