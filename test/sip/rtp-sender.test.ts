// The paced RTP sender on a clock the test moves: one packet per 20 ms, and after a stall of the event
// loop the frames it skips show as a gap in the sequence numbers (loss), matching the timestamp jump.
import { expect, test } from "bun:test";
import type { FrameTicker, Tick } from "../../src/calls/frame-ticker";
import { muLawEncode } from "../../src/audio/g711";
import { codecByName } from "../../src/media/codecs";
import { parseRtp, sequenceDelta, type RtpPacket } from "../../src/media/rtp-packet";
import { RtpSender } from "../../src/media/rtp-sender";

function manualClock() {
  let now = 1000;
  const ticks = new Set<Tick>();
  const clock: FrameTicker = { now: () => now, add: (t) => void ticks.add(t), remove: (t) => void ticks.delete(t) };
  return {
    clock,
    /** Moves time on in `stepMs` steps, ticking at each (a stall is one big step). */
    advance(ms: number, stepMs = 2) {
      for (let left = ms; left > 0; left -= stepMs) {
        now += Math.min(stepMs, left);
        for (const tick of ticks) tick(now);
      }
    },
  };
}

test("after a stall the skipped frames are a sequence gap as long as the timestamp jump, and are counted", () => {
  const { clock, advance } = manualClock();
  const sent: RtpPacket[] = [];
  const sender = new RtpSender(codecByName("PCMU")!, (p) => sent.push(parseRtp(p)!), clock);
  sender.start();
  advance(200);
  expect(sent.length).toBe(11); // t = 0, 20, ..., 200
  expect(sender.framesSkipped).toBe(0);
  for (let i = 1; i < sent.length; i++) {
    expect(sequenceDelta(sent[i - 1]!.sequence, sent[i]!.sequence)).toBe(1);
    expect(sent[i]!.timestamp - sent[i - 1]!.timestamp).toBe(160);
  }

  const before = sent.length;
  advance(500, 500); // the event loop stalls for half a second
  advance(100);
  const [last, first] = [sent[before - 1]!, sent[before]!];
  const frames = (first.timestamp - last.timestamp) / 160;
  expect(frames).toBeGreaterThan(5);
  expect(sequenceDelta(last.sequence, first.sequence)).toBe(frames); // the receiver sees frames - 1 lost
  expect(sender.framesSkipped).toBe(frames - 1);
  expect(first.marker).toBe(true);
  // sent plus skipped covers the whole time: nothing vanishes unseen
  const span = (sent[sent.length - 1]!.timestamp - sent[0]!.timestamp) / 160 + 1;
  expect(sent.length + sender.framesSkipped).toBe(span);
  sender.stop();
});

test("agent frames go out in order after one frame of slack, encoded when pushed: the pusher may reuse its buffer", () => {
  const { clock, advance } = manualClock();
  const payloads: number[][] = [];
  const sender = new RtpSender(codecByName("PCMU")!, (p) => payloads.push([...parseRtp(p)!.payload]), clock);
  sender.start();
  const frame = new Int16Array(160); // one buffer, rewritten for every frame (as the playout does)
  for (const level of [1000, 2000, 3000]) {
    frame.fill(level);
    sender.push(frame);
  }
  frame.fill(-5000);
  advance(100);
  const encoded = (level: number) => [...muLawEncode(new Int16Array(160).fill(level))];
  const silence = new Array(160).fill(0xff);
  // t = 0: silence (no slack yet); 20, 40, 60: the three frames as pushed; then silence again
  expect(payloads).toEqual([silence, encoded(1000), encoded(2000), encoded(3000), silence, silence]);
  sender.stop();
});

test("held (a pause), queued frames wait while silence goes out; released, they go on in order, a new talk spurt", () => {
  const { clock, advance } = manualClock();
  const packets: RtpPacket[] = [];
  const sender = new RtpSender(codecByName("PCMU")!, (p) => packets.push(parseRtp(p)!), clock);
  sender.start();
  const frame = new Int16Array(160);
  for (const level of [1000, 2000, 3000, 4000]) {
    frame.fill(level);
    sender.push(frame);
  }
  advance(40); // t = 0: silence (no slack yet); 20, 40: the first two frames
  sender.hold(true);
  advance(100);
  sender.hold(false);
  advance(60);
  const level = (p: RtpPacket) =>
    p.payload[0] === 0xff
      ? 0
      : [1000, 2000, 3000, 4000].find((l) => muLawEncode(new Int16Array([l]))[0] === p.payload[0]);
  expect(packets.map(level)).toEqual([0, 1000, 2000, 0, 0, 0, 0, 0, 3000, 4000, 0]);
  expect(packets[8]!.marker).toBe(true);
  sender.stop();
});
