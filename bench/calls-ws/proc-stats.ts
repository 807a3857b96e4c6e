// CPU time and resident memory of a process, from /proc (Linux).
import { readdirSync, readFileSync } from "node:fs";

const ticksPerSecond = 100; // USER_HZ on Linux

/** CPU seconds (user + system) the process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond; // utime, stime
}

export function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return line ? Number(line[1]) / 1024 : 0;
}

/** CPU seconds used so far by every process whose command line matches (e.g. all of Postgres's backends). */
export function cpuSecondsMatching(matches: (cmdline: string) => boolean): number {
  let sum = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (matches(readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ")))
        sum += cpuSeconds(Number(entry));
    } catch {
      // exited since the listing
    }
  }
  return sum;
}
