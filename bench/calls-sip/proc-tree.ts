// CPU and memory of a process with all its descendants (the bridge's supervisor and its workers), from /proc.
import { readdirSync, readFileSync } from "node:fs";
import { cpuSeconds, eachProcess, rssMb, statCpuSeconds, statFieldsOf } from "../calls-ws/proc-stats";

/** `root` and every process below it. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  eachProcess((pid) => {
    const ppid = Number(statFieldsOf(pid)[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  });
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

const sumOver = (root: number, read: (pid: number) => number) =>
  processTree(root).reduce((sum, pid) => {
    try {
      return sum + read(pid);
    } catch {
      return sum; // exited meanwhile
    }
  }, 0);

export const treeCpuSeconds = (root: number) => sumOver(root, cpuSeconds);
export const treeRssMb = (root: number) => sumOver(root, rssMb);

/** CPU seconds of every thread of the tree, summed by thread name (the bridge names its own threads). */
export function treeCpuByThread(root: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of processTree(root)) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        out.set(name, (out.get(name) ?? 0) + statCpuSeconds(stat));
      }
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** "bun 40%, vas-media 30%" for the threads over 1 % of a core between two readings. */
export function describeThreads(before: Map<string, number>, after: Map<string, number>, seconds: number): string {
  return [...after]
    .map(([name, cpu]) => [name, ((cpu - (before.get(name) ?? 0)) / seconds) * 100] as const)
    .filter(([, percent]) => percent >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([name, percent]) => `${name} ${percent.toFixed(0)}%`)
    .join(", ");
}
