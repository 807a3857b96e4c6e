// CPU time and resident memory of a process, from /proc (Linux).
import { readdirSync, readFileSync } from "node:fs";

const ticksPerSecond = 100; // USER_HZ on Linux

/** Fields of a /proc stat line after the command name: index 0 is field 3 (state). */
export const statFields = (stat: string) => stat.slice(stat.lastIndexOf(")") + 2).split(" ");
/** The fields of a process's stat (see statFields). */
export const statFieldsOf = (pid: number) => statFields(readFileSync(`/proc/${pid}/stat`, "utf8"));

/** CPU seconds (user + system) the process has used so far. */
/** utime + stime of a process's or a thread's stat line, in seconds. */
export function statCpuSeconds(stat: string): number {
  const fields = statFields(stat);
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

export const cpuSeconds = (pid: number) => statCpuSeconds(readFileSync(`/proc/${pid}/stat`, "utf8"));

export function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return line ? Number(line[1]) / 1024 : 0;
}

/** Calls `visit` with every process's pid; a process that exits meanwhile is skipped. */
export function eachProcess(visit: (pid: number) => void) {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      visit(Number(entry));
    } catch {
      // exited since the listing
    }
  }
}

/** CPU seconds used so far by every process whose command line matches (e.g. all of Postgres's backends). */
export function cpuSecondsMatching(matches: (cmdline: string) => boolean): number {
  let sum = 0;
  eachProcess((pid) => {
    if (matches(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "))) sum += cpuSeconds(pid);
  });
  return sum;
}

/** What used the machine's CPU between two calls: every process's CPU seconds, by pid with its name. */
export function cpuByProcess(): Map<number, { name: string; seconds: number }> {
  const out = new Map<number, { name: string; seconds: number }>();
  eachProcess((pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    let name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    // our processes are all "bun": named by their script
    if (name === "bun" || name === "bun.exe") {
      const script = readFileSync(`/proc/${pid}/cmdline`, "utf8")
        .split("\0")
        .findLast((a) => a.endsWith(".ts"));
      if (script) name = `bun ${script.split("/").slice(-2).join("/")}`;
    }
    out.set(pid, { name, seconds: cpuSeconds(pid) });
  });
  return out;
}

/** "postgres 45%, bun 30%, …": the top users of the CPU since `before`, summed by process name. */
export function topCpu(before: Map<number, { name: string; seconds: number }>, elapsedS: number, top = 4): string {
  const byName = new Map<string, number>();
  for (const [pid, now] of cpuByProcess()) {
    const used = now.seconds - (before.get(pid)?.seconds ?? 0);
    if (used > 0) byName.set(now.name, (byName.get(now.name) ?? 0) + used);
  }
  return [...byName]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, s]) => `${name} ${((s / elapsedS) * 100).toFixed(0)}%`)
    .join(", ");
}

/** SCHED_IDLE (sched.h): runs only on what every other class leaves of a core */
export const SCHED_IDLE = 5;

/** A process's scheduling policy (field 41 of its stat). */
export function policyOf(pid: number): number {
  return Number(statFieldsOf(pid)[38]);
}

/** CPU seconds used so far by the processes in the idle class (bench/lib/evict.ts puts strangers there). */
export function idleClassCpuSeconds(): number {
  let sum = 0;
  eachProcess((pid) => {
    if (policyOf(pid) === SCHED_IDLE) sum += cpuSeconds(pid);
  });
  return sum;
}
