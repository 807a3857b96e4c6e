// The conclusion thread lowers its own priority, and only its own: the event loop that paces the
// live calls' audio keeps the normal one.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import type { PendingEnd } from "../../src/calls/conclusion-spool";
import { writeRecordedCallEnd } from "../../src/calls/conclusion-thread";
import { PRIORITY_STEP } from "../../src/lib/thread-priority";

/** The nice value of each thread of this process, by thread id. */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
  }
  return nices;
}

test("the conclusion thread runs 10 nice levels below the event loop, which keeps its own", async () => {
  const before = threadNices();
  // relative to the process's own nice value: CI may start the suite under `nice`
  const base = before.get(process.pid)!;
  // nothing listens on port 1: the write fails, but the thread has started and lowered itself first
  const pending = { task: { callId: "thread-priority" } } as unknown as PendingEnd;
  const recording = { store: "postgres", path: "/nonexistent.wav", contentType: "audio/wav" } as const;
  await expect(writeRecordedCallEnd("postgres://127.0.0.1:1/none", pending, recording)).rejects.toThrow();
  const after = threadNices();
  // the thread (and the helper threads it started after lowering itself, which inherit its value); in
  // a whole-suite run an earlier test file may have started it already
  const lowered = [...after].filter(([, nice]) => nice === Math.min(19, base + PRIORITY_STEP));
  expect(lowered.length).toBeGreaterThanOrEqual(1);
  // every thread that was there before (the event loop and its helpers) kept its priority
  for (const [tid, nice] of before) if (after.has(tid)) expect(after.get(tid)).toBe(nice);
  expect(after.get(process.pid)).toBe(base);
});
