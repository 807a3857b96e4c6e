// CPU and memory of a process with all its descendants (the bridge's supervisor and its workers), from /proc.
import { readFileSync } from "node:fs";
import { cpuSeconds, eachProcess, rssMb } from "../calls-ws/proc-stats";

/** `root` and every process below it. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  eachProcess((pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
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
