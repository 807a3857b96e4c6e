// The benches' core split (bench/lib/pinning.ts): processes started on a side's cores, and processes
// moved there after they started, run there with every thread, as the kernel reports it; a process
// found outside its side, or a load side that saturates its cores, makes the run invalid.
import { afterEach, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { onCpus, parseCpuList, pin, pinningFrom, threadsOf, watchCores } from "../../bench/lib/pinning";

// two busy threads (the main one and a worker) until killed
const spinner = [
  "bun",
  "-e",
  `new Worker(URL.createObjectURL(new Blob(["for(;;){}"], { type: "application/javascript" }))); for(;;){}`,
];
const cores = availableParallelism();
// on one core both sides are core 0: the checks below still hold, the split is reported as missing
const pinning = pinningFrom({}, cores);
const started: ReturnType<typeof Bun.spawn>[] = [];
const spawn = (argv: string[]) => {
  const proc = Bun.spawn(argv, { stdout: "ignore", stderr: "ignore" });
  started.push(proc);
  return proc;
};
afterEach(async () => {
  for (const proc of started.splice(0)) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
});

/** Waits until the process has its worker thread (a main thread alone has not started spinning both). */
async function withThreads(pid: number, n: number) {
  while (threadsOf(pid).filter((t) => t.cpu > 0).length < n) await Bun.sleep(50);
}

test("default split: the SUT on core 0, the load on every other core", () => {
  expect(pinningFrom({}, 2)).toMatchObject({ sut: "0", load: "1", split: true });
  expect(pinningFrom({}, 4)).toMatchObject({ sutCores: [0], loadCores: [1, 2, 3], split: true });
  expect(pinningFrom({ "sut-cpus": "0-1", "load-cpus": "1" }, 4).split).toBe(false);
  expect(parseCpuList("0-2,5")).toEqual([0, 1, 2, 5]);
  expect(() => parseCpuList("3-1")).toThrow();
});

test("processes started on each side's cores run there, every thread, as the kernel reports", async () => {
  const sut = spawn(onCpus(pinning.sut, spinner));
  const load = spawn(onCpus(pinning.load, spinner));
  await Promise.all([withThreads(sut.pid, 2), withThreads(load.pid, 2)]);
  const watch = watchCores(
    pinning,
    [
      { label: "sut spinner", side: "sut", pids: () => [sut.pid] },
      { label: "load spinner", side: "load", pids: () => [load.pid] },
    ],
    { intervalMs: 100 },
  );
  await Bun.sleep(600);
  const report = watch.stop();
  for (const [entry, cpus] of [
    [report.entries[0]!, pinning.sutCores],
    [report.entries[1]!, pinning.loadCores],
  ] as const) {
    expect(entry.threads).toBeGreaterThanOrEqual(2);
    expect(entry.allowed.flatMap(parseCpuList).every((c) => cpus.includes(c))).toBe(true);
    expect(entry.ranOn.length).toBeGreaterThan(0);
    expect(entry.ranOn.every((c) => cpus.includes(c))).toBe(true);
    expect(entry.cpuSeconds).toBeGreaterThan(0);
  }
  // each thread individually, straight from /proc
  for (const t of threadsOf(sut.pid)) expect(parseCpuList(t.allowed)).toEqual(pinning.sutCores);
  for (const t of threadsOf(load.pid)) expect(parseCpuList(t.allowed)).toEqual(pinning.loadCores);
});

test("a running process moved with pin() runs on its new cores with all its threads", async () => {
  const proc = spawn(spinner);
  await withThreads(proc.pid, 2);
  const everyCore = Array.from({ length: cores }, (_, i) => i);
  expect(threadsOf(proc.pid).every((t) => parseCpuList(t.allowed).length === everyCore.length)).toBe(true);
  pin(proc.pid, pinning.load);
  const watch = watchCores(pinning, [{ label: "moved", side: "load", pids: () => [proc.pid] }], { intervalMs: 100 });
  await Bun.sleep(500);
  const [entry] = watch.stop().entries;
  expect(entry!.allowed.map(parseCpuList)).toEqual([pinning.loadCores]);
  expect(entry!.ranOn.every((c) => pinning.loadCores.includes(c))).toBe(true);
  expect(entry!.ranOn.length).toBeGreaterThan(0);
});

test("a process outside its side's cores, or a load side that fills its cores, makes the run invalid", async () => {
  const proc = spawn(onCpus(pinning.sut, spinner));
  await withThreads(proc.pid, 2);
  // watched as load: it is allowed (and runs) on the SUT's cores
  const misplaced = watchCores(pinning, [{ label: "misplaced", side: "load", pids: () => [proc.pid] }], {
    intervalMs: 100,
  });
  await Bun.sleep(300);
  const wrong = misplaced.stop();
  expect(wrong.valid).toBe(false);
  expect(wrong.text).toContain("INVALID");
  expect(wrong.text).toContain("misplaced allowed on");

  // two spinning threads on the load cores take far more than 5 % of them (the threshold lowered so
  // that a machine busy with others cannot hide the spinner's share)
  const load = spawn(onCpus(pinning.load, spinner));
  await withThreads(load.pid, 2);
  const busy = watchCores(pinning, [{ label: "spinner", side: "load", pids: () => [load.pid] }], {
    intervalMs: 100,
    saturated: 0.05,
  });
  await Bun.sleep(400);
  const full = busy.stop();
  expect(full.valid).toBe(false);
  expect(full.loadPeak).toBeGreaterThan(0.05);
  expect(full.text).toContain("the load side took");
});
