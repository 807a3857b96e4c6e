// `bun run bench <name>` (bench/run.ts): a bench killed by a signal fails the run, and says by which.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";

/** The pids of `pid`'s children (Linux). */
const childrenOf = (pid: number) =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);

test("a bench killed by SIGKILL: the runner exits 137 and names the signal", async () => {
  // the media bench, killed as soon as it is started (before it has made anything)
  const runner = Bun.spawn(["bun", "bench/run.ts", "media"], { stdout: "ignore", stderr: "pipe" });
  let bench: number | undefined;
  while (bench === undefined && runner.exitCode === null) {
    bench = childrenOf(runner.pid)[0];
    await Bun.sleep(5);
  }
  process.kill(bench!, "SIGKILL");
  expect(await runner.exited).toBe(137);
  expect(await new Response(runner.stderr).text()).toContain("bench media was killed by SIGKILL");
});
