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
  // blocked far longer than a loaded machine delays a timer, so the one long delay stands out
  const busyUntil = performance.now() + 300;
  while (performance.now() < busyUntil); // the event loop is blocked for 300 ms
  await Bun.sleep(10);
  ticker.remove(tick);
  expect(runs.length).toBeGreaterThan(quiet); // no delay for the first run
  expect(runs.length).toBe(delays.length + 1);
  expect(Math.max(...delays.slice(0, quiet))).toBeLessThan(250);
  expect(Math.max(...delays.slice(quiet))).toBeGreaterThanOrEqual(250);

  // a ticker that stopped starts afresh: the pause is not a delay
  delays.length = 0;
  await Bun.sleep(300);
  ticker.add(tick);
  await Bun.sleep(10);
  ticker.remove(tick);
  expect(delays.length).toBeGreaterThan(0);
  expect(Math.max(...delays)).toBeLessThan(250);
});
