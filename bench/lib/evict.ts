// Other processes off the SUT cores while a bench runs. On a shared machine a test run or a compiler
// beside the bench took slices of the SUT's core, and showed as the SUT's jitter and latency tails
// (the pinned runs' "cores busy with every process counted" above what the SUT itself took). Every
// process that is not this bench's is moved to the load cores for the run (their CPU counts against
// the load side, which is what the validity check watches) and given its own cores back at the end;
// one born during the run from a moved process gets its moved ancestor's. `--leave-others` keeps them.
import { readFileSync } from "node:fs";
import { eachProcess } from "../calls-ws/proc-stats";
import { processTree } from "../calls-sip/proc-tree";
import { parseCpuList, pin, type Pinning } from "./pinning";

const allowedOf = (pid: number) => /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]!;
const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
};
const sameCores = (list: string, cores: number[]) => parseCpuList(list).join() === cores.join();
/** Kernel threads have no command line; they are not ours to move. */
const isUserProcess = (pid: number) => readFileSync(`/proc/${pid}/cmdline`).length > 0;

export type Eviction = { moved: number; restore(): void };

/** Moves every user process outside this bench's tree that may run on a SUT core onto the load cores. */
export function evictOthers(pinning: Pinning): Eviction {
  const ours = new Set(processTree(process.pid));
  const sut = new Set(pinning.sutCores);
  const original = new Map<number, string>();
  eachProcess((pid) => {
    if (ours.has(pid) || !isUserProcess(pid)) return;
    const allowed = allowedOf(pid);
    if (!parseCpuList(allowed).some((c) => sut.has(c))) return;
    try {
      pin(pid, pinning.load);
      original.set(pid, allowed);
    } catch {
      // exited, or not ours to move (another user's)
    }
  });

  return {
    moved: original.size,
    restore() {
      const ours = new Set(processTree(process.pid));
      eachProcess((pid) => {
        if (ours.has(pid) || !isUserProcess(pid)) return;
        // a moved process, or one born of one since: the nearest moved ancestor's cores
        for (let p = pid; p > 0; p = parentOf(p)) {
          const cores = original.get(p);
          if (cores === undefined) continue;
          if (p === pid || sameCores(allowedOf(pid), pinning.loadCores)) pin(pid, cores);
          return;
        }
      });
    },
  };
}
