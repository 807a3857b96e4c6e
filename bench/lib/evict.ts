// Other processes off the SUT cores while a bench runs. On a shared machine a test run or a compiler
// beside the bench took slices of the SUT's core, and showed as the SUT's jitter and latency tails
// (the pinned runs' "cores busy with every process counted" above what the SUT itself took). Every
// process that is not this bench's is moved to the load cores for the run, and there runs in the idle
// class (SCHED_IDLE: only on what the generators leave, so it cannot starve them; watchCores does not
// count that time as the load cores' being busy). At the end each gets its cores and class back; one
// born during the run from a moved process gets its moved ancestor's. Postgres stays as it is (it
// serves the bench's database too). `--leave-others` keeps them all.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { eachProcess, policyOf, SCHED_IDLE, statFieldsOf } from "../calls-ws/proc-stats";
import { processTree } from "../calls-sip/proc-tree";
import { availableParallelism } from "node:os";
import { parseCpuList, pin, pinningFrom, type Pinning } from "./pinning";

/** sched policies (sched.h) that chrt can set back, by the flag it takes */
const classes: Record<number, string> = { 0: "--other", 3: "--batch", [SCHED_IDLE]: "--idle" };

const allowedOf = (pid: number) => /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]!;
const parentOf = (pid: number) => Number(statFieldsOf(pid)[1]);
const sameCores = (list: string, cores: number[]) => parseCpuList(list).join() === cores.join();
/**
 * Kernel threads have no command line; they are not ours to move. Nor is Postgres: its server serves
 * the bench's database too, and a backend forked from an idle-class postmaster would be idle class.
 */
const isStranger = (pid: number) =>
  readFileSync(`/proc/${pid}/cmdline`).length > 0 && readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "postgres";
/** Every thread of the process into a scheduling class (real-time ones are left as they are). */
const setClass = (pid: number, policy: number) => {
  const flag = classes[policy];
  if (flag) spawnSync("chrt", [flag, "-a", "-p", "0", String(pid)]);
};

export type Eviction = { moved: number; restore(): void };

/** Moves every user process outside this bench's tree that may run on a SUT core onto the load cores. */
export function evictOthers(pinning: Pinning): Eviction {
  const ours = new Set(processTree(process.pid));
  const sut = new Set(pinning.sutCores);
  const original = new Map<number, { cores: string; policy: number }>();
  eachProcess((pid) => {
    if (ours.has(pid) || !isStranger(pid)) return;
    const cores = allowedOf(pid);
    if (!parseCpuList(cores).some((c) => sut.has(c))) return;
    const policy = policyOf(pid);
    try {
      pin(pid, pinning.load);
    } catch {
      return; // exited, or not ours to move (another user's)
    }
    original.set(pid, { cores, policy });
    if (classes[policy]) setClass(pid, SCHED_IDLE);
  });

  return {
    moved: original.size,
    restore() {
      const ours = new Set(processTree(process.pid));
      eachProcess((pid) => {
        if (ours.has(pid) || !isStranger(pid)) return;
        // a moved process, or one born of one since: the nearest moved ancestor's cores and class
        for (let p = pid; p > 0; p = parentOf(p)) {
          const was = original.get(p);
          if (was === undefined) continue;
          if (p !== pid && !sameCores(allowedOf(pid), pinning.loadCores)) return; // placed by someone since
          pin(pid, was.cores);
          if (policyOf(pid) === SCHED_IDLE) setClass(pid, was.policy);
          return;
        }
      });
    },
  };
}

/**
 * For a bench that is not pinned (hooks: Temporal, the worker, Postgres and the receiver share every
 * core): the machine's other processes stay where they are but run in the idle class until `restore`.
 */
export function yieldOthers(cores = availableParallelism()): Eviction {
  const all = `0-${cores - 1}`;
  return evictOthers({ ...pinningFrom({ "sut-cpus": all, "load-cpus": all }, cores), evict: true });
}
