// The pacing of agent audio, driven by a hand-cranked clock: no sockets, no real time.
import { expect, test } from "bun:test";
import type { FrameTicker, Tick } from "../../src/calls/frame-ticker";
import { Playout } from "../../src/calls/playout";
import { at } from "../hooks/fixtures";

function manualTicker() {
  let now = 0;
  const ticks = new Set<Tick>();
  const ticker: FrameTicker = { now: () => now, add: (t) => void ticks.add(t), remove: (t) => void ticks.delete(t) };
  return {
    ticker,
    subscribed: () => ticks.size,
    advance(ms: number, step = 5) {
      for (let t = 0; t < ms; t += step) {
        now += step;
        for (const tick of [...ticks]) tick(now);
      }
    },
  };
}

const ramp = (n: number, from = 1) => Int16Array.from({ length: n }, (_, i) => from + i);

test("frames go out one per 20 ms, in order, only once the call is live", () => {
  const clock = manualTicker();
  const played: Int16Array[] = [];
  const playout = new Playout(8000, (f) => played.push(f.slice()), clock.ticker); // frames are reused
  playout.push(ramp(500)); // 62.5 ms: three frames and a padded tail
  clock.advance(100);
  expect(played).toHaveLength(0);
  playout.start(); // the first frame is due: it goes at once, not at the next tick
  expect(played).toHaveLength(1);
  clock.advance(15);
  expect(played).toHaveLength(1);
  clock.advance(5);
  expect(played).toHaveLength(2);
  clock.advance(60);
  expect(played.map((f) => f.length)).toEqual([160, 160, 160, 160]);
  expect(Array.from(at(played, 3).subarray(0, 21))).toEqual(Array.from(ramp(20, 481)).concat([0]));
  expect(played.flatMap((f) => Array.from(f)).slice(0, 500)).toEqual(Array.from(ramp(500)));
  expect(clock.subscribed()).toBe(0); // idle calls cost nothing per tick
});

test("a flush drops what was not played and wakes whoever waits for the drain", () => {
  const clock = manualTicker();
  const played: Int16Array[] = [];
  const playout = new Playout(16000, (f) => played.push(f.slice()), clock.ticker);
  playout.start();
  playout.push(ramp(3200)); // 200 ms
  let drained = false;
  playout.whenDrained(() => (drained = true));
  clock.advance(45);
  expect(played).toHaveLength(3);
  expect(playout.queuedMs).toBe(140);
  playout.flush();
  expect(drained).toBe(true);
  clock.advance(100);
  expect(played).toHaveLength(3);
});

test("after an underrun the next frame keeps to the 20 ms grid; after a stall it does not burst", () => {
  const clock = manualTicker();
  const at: number[] = [];
  const playout = new Playout(8000, () => at.push(clock.ticker.now()), clock.ticker);
  playout.start();
  playout.push(ramp(160));
  clock.advance(5);
  playout.push(ramp(160)); // arrives right after the first frame played
  clock.advance(40);
  expect(at).toEqual([0, 20]); // due at 0 and 20: the first at once, the next on the grid, not at 5
  playout.push(ramp(160 * 20));
  clock.advance(500, 500); // a 500 ms stall of the event loop
  expect(at).toEqual([0, 20, 45, 545]); // (the third went with its push) one frame after the stall, not 25
});

test("with a lead the transport gets frames that much early, and the drain waits for what it still holds", async () => {
  const clock = manualTicker();
  const played: number[] = [];
  const playout = new Playout(8000, () => played.push(clock.ticker.now()), clock.ticker, 60);
  playout.start();
  playout.push(new Int16Array(160 * 10)); // 200 ms
  let drained = false;
  playout.whenDrained(() => (drained = true));
  clock.advance(5);
  // due at 0, 20, 40, 60 ms (at once, with the push) and 80 ms (at 20 ms, 60 ms early)
  expect(played).toEqual([0, 0, 0, 0]);
  clock.advance(20);
  expect(played).toHaveLength(5);
  clock.advance(150);
  expect(played).toHaveLength(10);
  expect(playout.lateFrames).toBe(0);
  // the last frame is due at 180 ms, handed over at 120: the transport plays it until 200 ms and more
  expect(drained).toBe(false);
  clock.advance(10);
  await Bun.sleep(100);
  expect(drained).toBe(true);
});

test("frames handed over after the caller should have heard them are counted late", () => {
  const clock = manualTicker();
  const playout = new Playout(8000, () => {}, clock.ticker, 60);
  playout.start();
  playout.push(new Int16Array(160 * 50)); // 1 s
  clock.advance(200, 5);
  expect(playout.lateFrames).toBe(0);
  // frames up to 260 ms went out; a stall to 340 ms: those due at 280 and 300 ms should have played
  // by 300 and 320 ms (a frame after they were due), the one due at 320 ms is just in time
  clock.advance(140, 140);
  expect(playout.lateFrames).toBe(2);
  // a stall longer than the lag the playout catches up on (100 ms): the gap (due 420 ms, now 640) is
  // counted in frames, and the schedule restarts
  clock.advance(300, 300);
  expect(playout.lateFrames).toBe(2 + 11);
});

test("audio pushed with onSent tells when its first frame goes out, a lead included; a flush drops it untold", () => {
  const clock = manualTicker();
  const sent: number[] = [];
  const playout = new Playout(8000, () => {}, clock.ticker, 60);
  playout.start();
  playout.push(new Int16Array(160 * 5)); // 100 ms of an earlier reply still to play
  playout.push(new Int16Array(100), (at) => sent.push(at));
  playout.push(new Int16Array(160), (at) => sent.push(at)); // begins in the same frame as the one before
  playout.push(new Int16Array(160), (at) => sent.push(at));
  clock.advance(5);
  // frames due at 0..60 ms were handed over at 5 ms; the frame due at 100 ms holds both pushes' first samples
  expect(sent).toEqual([]);
  clock.advance(60);
  expect(sent).toEqual([100, 100, 120]);
  playout.push(new Int16Array(160 * 10), (at) => sent.push(at));
  playout.flush(); // a barge-in: it never reaches the caller
  playout.push(new Int16Array(160));
  clock.advance(200);
  expect(sent).toEqual([100, 100, 120]);
});

test("a pause holds the audio where the caller is in it: the frames the transport holds play later, each heard once", () => {
  const clock = manualTicker();
  const handed: number[] = []; // each frame's first sample, as handed over
  const heard: { first: number; at: number }[] = [];
  const playout = new Playout(
    8000,
    (f) => handed.push(f[0]!),
    clock.ticker,
    60,
    (f) => heard.push({ first: f[0]!, at: clock.ticker.now() }),
  );
  playout.start();
  playout.push(ramp(160 * 10)); // 200 ms: frames starting at 1, 161, 321, …
  clock.advance(5); // due at 0..60 ms: four frames handed over, the first one playing
  expect(handed).toEqual([1, 161, 321, 481]);
  clock.advance(20); // at 25 ms: the second plays, the fifth is handed over
  expect(heard.map((h) => h.first)).toEqual([1, 161]);
  playout.pause();
  clock.advance(500);
  expect(handed).toHaveLength(5); // nothing more handed over, nothing heard
  expect(heard).toHaveLength(2);
  expect(clock.subscribed()).toBe(0); // and nothing ticks while paused
  playout.resume(); // at 525 ms: the third frame (due at 40 ms) plays at 540
  clock.advance(300);
  expect(handed).toEqual([1, 161, 321, 481, 641, 801, 961, 1121, 1281, 1441]);
  expect(heard.map((h) => h.first)).toEqual(handed);
  expect(heard.slice(2).map((h) => h.at)).toEqual([540, 560, 580, 600, 620, 640, 660, 680]);
});

test("audio pushed while paused waits; a flush ends the pause", () => {
  const clock = manualTicker();
  const heard: number[] = [];
  const playout = new Playout(
    8000,
    () => {},
    clock.ticker,
    0,
    (f) => heard.push(f[0]!),
  );
  playout.start();
  playout.pause();
  playout.push(ramp(320));
  clock.advance(100);
  expect(heard).toEqual([]);
  let drained = false;
  playout.whenDrained(() => (drained = true));
  playout.flush();
  expect(drained).toBe(true);
  playout.push(ramp(160, 7));
  clock.advance(20);
  expect(heard).toEqual([7]);
});
