// The bridge's log lines go to stdout from a thread: a reader that stops must not stall the event loop.
import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Runs the child with its stdout on a pipe that nobody reads (a shell reader that waits for a file)
 * until the child says its event loop is free, then lets the reader drain it.
 */
async function runChild(env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "log-thread-"));
  const go = join(dir, "go");
  const child = spawn(
    "bash",
    ["-c", `bun test/lib/log-thread-child.ts | (while [ ! -e "${go}" ]; do sleep 0.02; done; cat)`],
    { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const free = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 10_000);
    child.stderr!.on("data", (d: Buffer) => {
      if (d.toString().includes("loop free")) {
        clearTimeout(timer);
        resolve(true);
      }
    });
  });
  writeFileSync(go, "");
  child.stdin!.write("go\n");
  await new Promise((resolve) => child.stdout!.once("close", resolve)); // all of it read
  rmSync(dir, { recursive: true, force: true });
  return {
    free,
    lines: out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l)),
  };
}

test("2.4 MB of lines while stdout is not read: the event loop goes on, and every line arrives in order", async () => {
  const { free, lines } = await runChild({ LINES: "10000" });
  expect(free).toBe(true); // with writes on the event loop it would wait for the reader
  const numbered = lines.filter((l) => l.msg === "line").map((l) => l.i);
  expect(numbered).toEqual(Array.from({ length: 10_000 }, (_, i) => i));
  expect(lines.at(-1).msg).toBe("last"); // written at exit, after the rest
}, 60_000);

test("above the cap lines are dropped and counted, not queued without end", async () => {
  const { free, lines } = await runChild({ LINES: "10000", MAX_QUEUED_BYTES: String(256 * 1024) });
  expect(free).toBe(true);
  const numbered = lines.filter((l) => l.msg === "line").map((l) => l.i);
  const dropped = lines.find((l) => l.msg === "log lines dropped");
  expect(numbered.length).toBeLessThan(10_000);
  // the child logged 10,000 lines and "last"; every one that did not arrive is counted
  const arrived = numbered.length + lines.filter((l) => l.msg === "last").length;
  expect(dropped.count).toBe(10_001 - arrived);
  expect(numbered).toEqual([...numbered].sort((a, b) => a - b)); // what arrived is in order
}, 60_000);
