// The caller's audio by its place in the stream, back to when it reached the bridge.
import { expect, test } from "bun:test";
import { InputTimeline } from "../../src/voice/input-timeline";

test("a moment of the stream is its frame's arrival less what followed it in the frame", () => {
  const timeline = new InputTimeline();
  // 20 ms frames: the first three in real time from t = 1000, then a stall and two at once at 1100
  for (const at of [1000, 1020, 1040, 1100, 1100]) timeline.add(20, at);
  expect(timeline.timeOf(10)).toBe(990);
  expect(timeline.timeOf(20)).toBe(1000);
  expect(timeline.timeOf(45)).toBe(1025);
  expect(timeline.timeOf(70)).toBe(1090);
  expect(timeline.timeOf(100)).toBe(1100);
  expect(timeline.timeOf(101)).toBeNull(); // not arrived yet
});

test("arrivals older than half a minute are let go", () => {
  const timeline = new InputTimeline();
  for (let i = 0; i < 3000; i++) timeline.add(20, i * 20); // a minute
  expect(timeline.timeOf(59_990)).toBe(59_970);
  expect(timeline.timeOf(35_000)).toBe(34_980);
  expect(timeline.timeOf(1_000)).toBeNull();
});
