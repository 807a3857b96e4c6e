// Jobs queued in the same instant run one per event-loop turn: a timer that falls due meanwhile (the
// frame ticker) runs between two of them, and a job that throws does not stop the ones after it.
import { expect, test } from "bun:test";
import { createTurnQueue } from "../../src/lib/turn-queue";

const busy = (ms: number) => {
  const start = performance.now();
  while (performance.now() - start < ms);
};

test("a due timer runs between two jobs, and a failing job is reported and skipped", async () => {
  const order: string[] = [];
  const errors: unknown[] = [];
  const queue = createTurnQueue((error) => errors.push(error));
  setTimeout(() => order.push("timer"), 1);
  for (let i = 0; i < 4; i++)
    queue(() => {
      busy(3);
      if (i === 1) throw new Error("job 1 failed");
      order.push(`job${i}`);
    });
  await Bun.sleep(50);
  expect(order.filter((x) => x.startsWith("job"))).toEqual(["job0", "job2", "job3"]);
  // queued all at once, yet the timer that fell due during job 0 did not wait for the last job
  expect(order.indexOf("timer")).toBeGreaterThan(-1);
  expect(order.indexOf("timer")).toBeLessThan(order.indexOf("job3"));
  expect(errors).toHaveLength(1);
});
