// Two people joined by a bridged transfer speak in turn, each a 1.5 s tone of their own, and the call's
// recording is checked for both: the transfer tests' proof that audio flows both ways and is recorded.
import { expect } from "bun:test";
import { beep } from "../../helpers/answering-audio";
import { eventually } from "./eventually";
import type { RtpPeer } from "./rtp-peer";
import { firstToneFrame, lastToneFrame, toneFrames, toneLength, toneOver } from "./tone-frames";

const first = 700;
const second = 1200;

/**
 * `a` says a tone; `b` answers with its own only once the whole of `a`'s reached it (mixed, neither
 * tone is pure in a frame: a reply after the first third of it left a third of each alone), and the
 * reply is heard whole at `a`.
 */
export async function exchangeTones(a: RtpPeer, b: RtpPeer) {
  a.say(beep(first, 1500, 8000));
  await eventually(() => a.pending === 0 && toneOver(b.heard(), first), `the ${first} Hz tone heard whole`, 20_000);
  b.say(beep(second, 1500, 8000));
  await eventually(() => b.pending === 0 && toneOver(a.heard(), second), `the ${second} Hz tone heard whole`, 20_000);
  expect(toneFrames(b.heard(), first)).toBeGreaterThanOrEqual(70);
  expect(toneFrames(a.heard(), second)).toBeGreaterThanOrEqual(70);
}

/**
 * The recording holds each 1.5 s tone (75 frames) whole, the first before the answer. Measured with
 * toneLength: the recorder places each burst of frames where it arrives, so a stall of this process
 * (whose event loop runs the RTP peers) leaves gaps inside a tone, misaligned to a fixed 20 ms grid.
 */
export function expectTonesRecorded(samples: Int16Array) {
  expect(toneLength(samples, first)).toBeGreaterThanOrEqual(72);
  expect(toneLength(samples, second)).toBeGreaterThanOrEqual(72);
  expect(lastToneFrame(samples, first)).toBeLessThan(firstToneFrame(samples, second));
}
