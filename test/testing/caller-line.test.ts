// The simulated caller's line (src/testing/audio-caller.ts): frames go out in real time, and the end
// of the caller's words is when the utterance's last frame with speech in it went out, not the end of
// the quiet the TTS padded it with.
import { expect, test } from "bun:test";
import { CallerLine } from "../../src/testing/audio-caller";

const FRAME = 320; // 20 ms at 16 kHz
const frames = (n: number, level: number) => new Int16Array(n * FRAME).fill(level);

test("the voice's end is when its last voiced frame went out, before the padding's quiet has", async () => {
  const sent: { at: number; loud: boolean }[] = [];
  const line = new CallerLine((frame) => {
    const samples = new Int16Array(frame.buffer, frame.byteOffset, frame.byteLength / 2);
    sent.push({ at: performance.now(), loud: samples.some((x) => x > 64) });
  });
  try {
    // 5 frames of speech, then 10 frames (200 ms) of the TTS's quiet
    const spoken = line.speak(new Int16Array([...frames(5, 2000), ...frames(10, 0)]));
    expect(line.voiceEndedAt).toBeNull();
    await spoken;
    const last = sent.findLastIndex((f) => f.loud);
    expect(sent.filter((f) => f.loud)).toHaveLength(5);
    // as the last voiced frame went, before the next one
    expect(line.voiceEndedAt!).toBeGreaterThanOrEqual(sent[last]!.at);
    expect(line.voiceEndedAt!).toBeLessThanOrEqual(sent[last + 1]!.at);
    expect(sent.at(-1)!.at - line.voiceEndedAt!).toBeGreaterThanOrEqual(150); // 10 quiet frames after it
    // a new utterance starts without an end until its own voice has gone out
    const again = line.speak(frames(3, 2000));
    expect(line.voiceEndedAt).toBeNull();
    await again;
    expect(line.voiceEndedAt!).toBeGreaterThanOrEqual(sent.findLast((f) => f.loud)!.at);
  } finally {
    line.stop();
  }
});
