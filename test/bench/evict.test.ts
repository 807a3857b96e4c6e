// The benches' eviction (bench/lib/evict.ts): a process that is not the bench's moves, every thread,
// from the SUT cores to the load cores and into the idle class for the run, and gets its own cores and
// class back at the end, as does a child it started meanwhile; the bench's own children stay as they were.
import { afterEach, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { policyOf, SCHED_IDLE } from "../../bench/calls-ws/proc-stats";
import { evictOthers } from "../../bench/lib/evict";
import { parseCpuList, pinningFrom } from "../../bench/lib/pinning";
import { until } from "../sip/helpers/eventually";

const cores = availableParallelism();
const all = [...Array(cores).keys()].join();
const pinning = pinningFrom({}, cores); // SUT 0, load the rest
/** The cores a process may run on, in taskset's list format. */
const allowed = (pid: number) =>
  parseCpuList(/Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]!).join();
const strangers: number[] = [];
afterEach(() => {
  for (const pid of strangers.splice(0)) {
    if (!(pid > 1)) continue; // (0 would be this process group)
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});

const readIfThere = (path: string) => {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return "";
  }
};

/** A process outside this one's tree: its shell parent exits at once, so it is reparented. */
async function stranger(command: string) {
  const shell = Bun.spawn(["sh", "-c", `${command} >/dev/null 2>&1 & echo $!`], { stdout: "pipe" });
  const pid = Number((await new Response(shell.stdout).text()).trim());
  await shell.exited;
  strangers.push(pid);
  return pid;
}

test("a stranger leaves the SUT core for the run and gets its cores back, a child it started meanwhile too", async () => {
  const dir = mkdtempSync(join(tmpdir(), "vas-evict-"));
  // starts a child once told to (the file `go`), and says its pid in `child`
  const outsider = await stranger(
    `sh -c 'while [ ! -e ${dir}/go ]; do sleep 0.02; done; sleep 60 & echo $! > ${dir}/child; wait'`,
  );
  const own = Bun.spawn(["sleep", "60"]);
  const eviction = evictOthers(pinning);
  try {
    expect(eviction.moved).toBeGreaterThan(0);
    expect(allowed(outsider)).toBe(pinning.loadCores.join());
    expect(policyOf(outsider)).toBe(SCHED_IDLE); // only on what the load side leaves
    expect(allowed(own.pid)).toBe(all); // the bench's own process tree is left to the bench
    // and Postgres, which serves the bench's database too (the suite's server is running)
    const postgres = Number(spawnSync("pgrep", ["-o", "-x", "postgres"], { encoding: "utf8" }).stdout.trim());
    expect(postgres).toBeGreaterThan(0);
    expect([allowed(postgres), policyOf(postgres)]).toEqual([all, 0]);
    writeFileSync(join(dir, "go"), "");
    const child = await until("the child", () => Number(readIfThere(join(dir, "child"))) || null);
    strangers.push(child);
    expect(allowed(child)).toBe(pinning.loadCores.join()); // born of a moved process
    expect(policyOf(child)).toBe(SCHED_IDLE);
  } finally {
    eviction.restore();
    own.kill("SIGKILL");
  }
  expect(allowed(outsider)).toBe(all);
  expect(allowed(strangers.at(-1)!)).toBe(all);
  expect([policyOf(outsider), policyOf(strangers.at(-1)!)]).toEqual([0, 0]); // SCHED_OTHER, as they were
  rmSync(dir, { recursive: true, force: true });
});
