import { expect, test } from "bun:test";
import { createFrameTicker } from "../../src/calls/frame-ticker";

test("the ticker reports how late each run came; a busy event loop shows as one long delay", async () => {
  const delays: number[] = [];
  const ticker = createFrameTicker(2, (ms) => delays.push(ms));
  const runs: number[] = [];
  const tick = (now: number) => runs.push(now);
  ticker.add(tick);
  await Bun.sleep(30);
  const quiet = delays.length;
  const busyUntil = performance.now() + 40;
  while (performance.now() < busyUntil); // the event loop is blocked for 40 ms
  await Bun.sleep(10);
  ticker.remove(tick);
  expect(runs.length).toBeGreaterThan(quiet); // no delay for the first run
  expect(runs.length).toBe(delays.length + 1);
  expect(Math.max(...delays.slice(0, quiet))).toBeLessThan(30);
  expect(Math.max(...delays.slice(quiet))).toBeGreaterThanOrEqual(30);

  // a ticker that stopped starts afresh: the pause is not a delay
  delays.length = 0;
  await Bun.sleep(50);
  ticker.add(tick);
  await Bun.sleep(10);
  ticker.remove(tick);
  expect(delays.length).toBeGreaterThan(0);
  expect(Math.max(...delays)).toBeLessThan(30);
});
