// Split cores for the benches (issue 44): the system under test (SUT) on its cores, every load
// generator and fake on the others, so that "calls per worker" becomes "calls per core" and a
// starved generator cannot pass its own wait off as the SUT's jitter. Pinned with taskset (the
// affinity is inherited by every thread and child a process makes later). What the kernel actually
// did is read back, not assumed: each thread's Cpus_allowed_list (/proc/<pid>/task/<tid>/status) and
// the CPU it last ran on (field 39 of its stat), for the threads that ran between two readings, and
// the CPU each took (utime + stime). A run whose load side saturated its cores measured the
// generators, not the SUT: it is reported INVALID.
//   --sut-cpus 0 --load-cpus 1 (the default on 2 cores; on more, the load gets every core but 0)
//   --leave-others: the machine's other processes stay where they are (bench/lib/evict.ts moves them)
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { eachProcess, idleClassCpuSeconds, statFields } from "../calls-ws/proc-stats";

export type Side = "sut" | "load";
export type Pinning = {
  sut: string;
  load: string;
  sutCores: number[];
  loadCores: number[];
  split: boolean;
  /** every other process moves to the load cores for the run (bench/lib/evict.ts) */
  evict: boolean;
};

/** The parseArgs options every bench adds. */
export const pinningOptions = {
  "sut-cpus": { type: "string" },
  "load-cpus": { type: "string" },
  "leave-others": { type: "boolean" },
} as const;

/** "0-2,4" → [0, 1, 2, 4] (taskset's and /proc's list format). */
export function parseCpuList(list: string): number[] {
  const cpus = new Set<number>();
  for (const part of list.trim().split(",")) {
    if (!part) continue;
    const [from, to = from] = part.split("-").map(Number) as [number, number?];
    if (!Number.isInteger(from) || !Number.isInteger(to) || to! < from) throw new Error(`bad CPU list "${list}"`);
    for (let c = from; c <= to!; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** The cores each side gets: the options, or SUT on core 0 and the load on every other core. */
export function pinningFrom(
  values: { "sut-cpus"?: string; "load-cpus"?: string; "leave-others"?: boolean },
  cores = availableParallelism(),
): Pinning {
  const sut = values["sut-cpus"] ?? "0";
  const load = values["load-cpus"] ?? (cores > 2 ? `1-${cores - 1}` : cores === 2 ? "1" : "0");
  const sutCores = parseCpuList(sut);
  const loadCores = parseCpuList(load);
  const split = !sutCores.some((c) => loadCores.includes(c));
  return { sut, load, sutCores, loadCores, split, evict: split && !values["leave-others"] };
}

export const cpusOf = (pinning: Pinning, side: Side) => (side === "sut" ? pinning.sut : pinning.load);

/** The command line that runs `argv` on `cpus` from its first instruction (taskset execs it: same pid). */
export const onCpus = (cpus: string, argv: string[]) => ["taskset", "-c", cpus, ...argv];

/** Moves every thread of a running process (or, with `thread`, that one thread) onto `cpus`. */
export function pin(pid: number, cpus: string, { thread = false } = {}) {
  const run = spawnSync("taskset", [...(thread ? [] : ["-a"]), "-p", "-c", cpus, String(pid)], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`taskset ${cpus} ${pid}: ${run.stderr.trim()}`);
}

const ticksPerSecond = 100; // USER_HZ on Linux

/** One thread as the kernel sees it now. */
export type ThreadState = { tid: number; name: string; allowed: string; processor: number; cpu: number; start: number };

/** Every thread of `pid`: its name, the CPUs it may run on, the one it last ran on, its CPU seconds and start time. */
export function threadsOf(pid: number): ThreadState[] {
  const out: ThreadState[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
      const f = statFields(stat);
      out.push({
        tid: Number(tid),
        name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
        allowed: /Cpus_allowed_list:\s*(\S+)/.exec(status)?.[1] ?? "?",
        processor: Number(f[36]),
        cpu: (Number(f[11]) + Number(f[12])) / ticksPerSecond,
        start: Number(f[19]) / ticksPerSecond,
      });
    } catch {
      // the thread exited meanwhile
    }
  }
  return out;
}

/** Per core, busy and total jiffies since boot (/proc/stat's cpuN lines). */
function coreTimes(): Map<number, { busy: number; total: number }> {
  const out = new Map<number, { busy: number; total: number }>();
  for (const line of readFileSync("/proc/stat", "utf8").split("\n")) {
    const m = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const t = m[2]!.split(/\s+/).map(Number);
    const total = t.slice(0, 8).reduce((a, b) => a + b, 0); // guest time is already in user
    out.set(Number(m[1]), { busy: total - t[3]! - t[4]!, total }); // idle and iowait are not busy
  }
  return out;
}

const uptime = () => Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);

/**
 * What a bench watches: a label, its side, the processes (read again at every sample, so that a tree's
 * new workers or a pool's new Postgres backends are seen, and pinned when `pinNew`), and optionally
 * which of their threads belong to it (the media thread of bench/transfer lives in the bench process).
 */
export type Watched = {
  label: string;
  side: Side;
  pids: () => number[];
  threads?: (thread: ThreadState) => boolean;
  /** pin every process not yet seen onto its side's cores (processes this bench did not start itself) */
  pinNew?: boolean;
  /** may have no process at all (else a missing process makes the run invalid) */
  optional?: boolean;
};

type Seen = {
  pids: Set<number>;
  threads: Set<number>;
  allowed: Set<string>;
  ranOn: Set<number>;
  cpu: Map<number, { first: number; last: number }>;
};

/** The processes of a Postgres database (each backend's title names it), for `Watched.pids`. */
export function postgresBackends(database: string): number[] {
  const pids: number[] = [];
  eachProcess((pid) => {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    // "postgres: 15/main: postgres <database> 127.0.0.1(5432) idle" (the cluster's name when it has one)
    if (cmd.startsWith("postgres: ") && cmd.includes(` ${database} `)) pids.push(pid);
  });
  return pids;
}

/** What the kernel showed for one watched entry: the CPU lists its threads were allowed, the CPUs they ran on. */
export type CoreEntry = {
  label: string;
  side: Side;
  threads: number;
  allowed: string[];
  ranOn: number[];
  cpuSeconds: number;
};
export type CoreReport = {
  valid: boolean;
  text: string;
  entries: CoreEntry[];
  loadPeak: number;
  loadMean: number;
  loadCoresBusy: number;
};

/**
 * Samples every `intervalMs` from now until `stop()`: per watched entry, the threads' allowed CPUs,
 * the CPUs the threads that ran were on, and the CPU they took. The load side's share of its cores
 * is taken per sample; saturated (>= `saturated`, default 95 %) in any sample, or its cores busy
 * that much on average with everything else on the machine counted, makes the run INVALID, as does
 * a thread allowed or found outside its side's cores.
 */
export function watchCores(pinning: Pinning, watched: Watched[], { intervalMs = 1000, saturated = 0.95 } = {}) {
  const started = uptime();
  const seen = new Map<Watched, Seen>(
    watched.map((w) => [
      w,
      { pids: new Set(), threads: new Set(), allowed: new Set(), ranOn: new Set(), cpu: new Map() },
    ]),
  );
  const loadShares: number[] = [];
  const coresAtStart = coreTimes();
  const idleClassAtStart = idleClassCpuSeconds();
  let lastAt = -Infinity;
  let lastLoadCpu: number | null = null;

  function sample() {
    let loadCpu = 0;
    for (const w of watched) {
      const s = seen.get(w)!;
      const cpus = cpusOf(pinning, w.side);
      for (const pid of w.pids()) {
        if (w.pinNew && !s.pids.has(pid)) {
          try {
            pin(pid, cpus);
          } catch {
            continue; // exited before it could be pinned
          }
        }
        s.pids.add(pid);
        let threads: ThreadState[];
        try {
          threads = threadsOf(pid);
        } catch {
          continue; // exited
        }
        for (const t of threads) {
          if (w.threads && !w.threads(t)) continue;
          s.threads.add(t.tid);
          s.allowed.add(t.allowed);
          const before = s.cpu.get(t.tid);
          // a thread that ran since the last reading: where it ran (a sleeping thread's processor field
          // still names the CPU it last ran on, perhaps before it was pinned)
          if (before && t.cpu > before.last) s.ranOn.add(t.processor);
          // a thread born after the watch began counts from zero; one seen late, from its first reading
          s.cpu.set(t.tid, { first: before?.first ?? (t.start >= started ? 0 : t.cpu), last: t.cpu });
        }
      }
      if (w.side === "load") loadCpu += used(s);
    }
    const now = performance.now();
    // a reading moments after the last (stop's) would divide a tick of CPU by almost nothing
    if (now - lastAt < intervalMs / 2) return;
    if (lastLoadCpu !== null)
      loadShares.push((loadCpu - lastLoadCpu) / ((now - lastAt) / 1000) / pinning.loadCores.length);
    lastLoadCpu = loadCpu;
    lastAt = now;
  }
  const used = (s: Seen) => [...s.cpu.values()].reduce((sum, c) => sum + (c.last - c.first), 0);

  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    /** Stops sampling (one last reading first) and says what ran where, what it took, and whether the run counts. */
    stop(): CoreReport {
      clearInterval(timer);
      sample();
      const seconds = uptime() - started;
      const coresNow = coreTimes();
      // (/proc/stat's ticks are USER_HZ, 100 a second)
      const busy = (cores: number[], notCountedSeconds = 0) => {
        let b = -notCountedSeconds * 100;
        let t = 0;
        for (const c of cores) {
          b += (coresNow.get(c)?.busy ?? 0) - (coresAtStart.get(c)?.busy ?? 0);
          t += (coresNow.get(c)?.total ?? 0) - (coresAtStart.get(c)?.total ?? 0);
        }
        return t > 0 ? Math.max(0, b) / t : 0;
      };
      const problems: string[] = [];
      const entries: CoreEntry[] = watched.map((w) => {
        const s = seen.get(w)!;
        const asked = new Set(parseCpuList(cpusOf(pinning, w.side)));
        const allowed = [...s.allowed].sort();
        const ranOn = [...s.ranOn].sort((a, b) => a - b);
        if (s.threads.size === 0 && !w.optional) problems.push(`${w.label}: no thread seen`);
        if (allowed.some((a) => parseCpuList(a).some((c) => !asked.has(c))))
          problems.push(`${w.label} allowed on ${allowed.join(" / ")}`);
        if (ranOn.some((c) => !asked.has(c))) problems.push(`${w.label} ran on ${ranOn.join(",")}`);
        return { label: w.label, side: w.side, threads: s.threads.size, allowed, ranOn, cpuSeconds: used(s) };
      });
      const lines = entries.map(
        (e) =>
          `  ${e.side === "sut" ? "SUT " : "load"}  ${e.label.padEnd(28)} ${e.threads} threads: allowed ${e.allowed.join(" / ") || "-"}, ran on ${e.ranOn.join(",") || "-"}; CPU ${e.cpuSeconds.toFixed(1)} s (${((e.cpuSeconds / seconds) * 100).toFixed(0)} % of a core)`,
      );
      const loadPeak = Math.max(0, ...loadShares);
      const loadMean = loadShares.length ? loadShares.reduce((a, b) => a + b, 0) / loadShares.length : 0;
      // the idle class (the machine's other processes, moved there by evict.ts) takes only what the
      // load side leaves: not a sign that it was starved
      // (at least 0: an idle-class process that exited took its CPU with it)
      const idleClass = Math.max(0, idleClassCpuSeconds() - idleClassAtStart);
      const loadCoresBusy = busy(pinning.loadCores, idleClass);
      if (!pinning.split) problems.push(`SUT and load share cores (${pinning.sut} / ${pinning.load})`);
      if (loadPeak >= saturated)
        problems.push(
          `the load side took ${(loadPeak * 100).toFixed(0)} % of its cores in one ${intervalMs / 1000} s sample`,
        );
      if (loadCoresBusy >= saturated)
        problems.push(
          `the load cores were ${(loadCoresBusy * 100).toFixed(0)} % busy (every process counted but the idle class)`,
        );
      const valid = problems.length === 0;
      const text =
        `cores over ${seconds.toFixed(0)} s (asked: SUT ${pinning.sut}, load ${pinning.load}; from /proc, threads that ran):\n${lines.join("\n")}\n` +
        `  load side ${(loadMean * 100).toFixed(0)} % of its cores on average, ${(loadPeak * 100).toFixed(0)} % at the busiest ${intervalMs / 1000} s; ` +
        `cores busy with every process counted: SUT ${(busy(pinning.sutCores) * 100).toFixed(0)} %, load ${(loadCoresBusy * 100).toFixed(0)} % (and ${((idleClass / seconds / pinning.loadCores.length) * 100).toFixed(0)} % in the idle class)` +
        `  ${valid ? "valid" : `INVALID: ${problems.join("; ")}`}`;
      return { valid, text, entries, loadPeak, loadMean, loadCoresBusy };
    },
  };
}
