// What every bench shares (BENCH_LOG_LEVEL=info shows the children's log lines on stderr): progress lines, percentiles, a scratch database with its secrets in the
// environment, child processes that are stopped (and the database dropped) at the end.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dropDatabase } from "../../src/db/migrate";
import { processTree } from "../calls-sip/proc-tree";
import { evictOthers } from "./evict";
import { onCpus, pin, type Pinning, postgresBackends, type Side, watchCores, type Watched } from "./pinning";

export const percentile = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : 0;

/**
 * With `pinning`, this process (its callers, SIPp and whatever else it starts) moves to the load
 * cores at once, and `spawnBun(…, "sut")` starts the system under test on the SUT cores.
 */
export function createBench(name: string, pinning?: Pinning) {
  const say = (msg: string) => console.error(`[bench/${name}] ${msg}`);
  const databaseName = `vas_bench_${name.replace(/\W/g, "_")}_${process.pid}`;
  const databaseUrl = `${process.env.TEST_DATABASE_SERVER ?? "postgres://postgres@127.0.0.1:5432"}/${databaseName}`;
  if (pinning) {
    pin(process.pid, pinning.load);
    say(`cores: SUT ${pinning.sut}, load ${pinning.load} (this process and what it starts)`);
  }
  if (pinning?.evict) {
    const eviction = evictOthers(pinning);
    say(`${eviction.moved} other processes moved to the load cores until the end (--leave-others: not)`);
    // given back however the bench ends (finish() exits; ^C too)
    process.once("exit", () => eviction.restore());
    process.once("SIGINT", () => process.exit(130));
  }
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: `admin_${randomBytes(8).toString("hex")}`,
    ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
    // benches' receivers listen on loopback, which the outbound guard refuses by default
    OUTBOUND_ALLOW_CIDRS: process.env.OUTBOUND_ALLOW_CIDRS || "127.0.0.0/8",
  };
  Object.assign(process.env, env);
  const children: ChildProcess[] = [];
  // processes started on the SUT cores: never the load side's "other children", even while one from
  // an earlier step (a floor's relay) is still exiting during the next step's watch
  const sutPids = new Set<number>();

  /** Spawns a bun script and resolves with its first stdout line that passes `ready`; `onLine` gets every later line. */
  function spawnBun(
    script: string,
    extraEnv: Record<string, string>,
    ready: (line: string) => boolean,
    onLine?: (line: string) => void,
    side: Side = "load",
  ): Promise<{ proc: ChildProcess; line: string }> {
    return new Promise((resolve, reject) => {
      // BENCH_PROFILE=<part of a script's path>: that child writes a CPU profile to BENCH_PROFILE_DIR on exit,
      // markdown, or with BENCH_PROFILE_FORMAT=cpuprofile the Chrome format that bench/long-tasks.ts reads
      const profile = process.env.BENCH_PROFILE && script.includes(process.env.BENCH_PROFILE);
      const format = process.env.BENCH_PROFILE_FORMAT === "cpuprofile" ? "--cpu-prof" : "--cpu-prof-md";
      const flags = profile ? [format, `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR ?? "bench-profiles"}`] : [];
      const argv = ["bun", ...flags, script];
      const [command, ...args] = pinning && side === "sut" ? onCpus(pinning.sut, argv) : argv;
      const proc = spawn(command!, args, {
        env: { ...env, ...extraEnv },
        stdio: ["ignore", "pipe", "inherit"],
      });
      children.push(proc);
      if (side === "sut" && proc.pid) sutPids.add(proc.pid);
      let buffer = "";
      let readyLine: string | null = null;
      proc.stdout!.on("data", (d: Buffer) => {
        // after ready the rest is drained, shown only when BENCH_LOG_LEVEL asks for the children's logs
        if (readyLine !== null && process.env.BENCH_LOG_LEVEL) process.stderr.write(d);
        if (readyLine !== null && !onLine) return;
        buffer += d.toString();
        const lines = buffer.split("\n");
        buffer = lines.pop()!; // an unfinished line waits for the rest
        for (const line of lines) {
          if (readyLine !== null) onLine?.(line);
          else if (ready(line)) {
            readyLine = line;
            resolve({ proc, line });
          }
        }
      });
      proc.once("exit", (code, signal) => reject(new Error(`${script} exited (${code ?? signal})`)));
    });
  }

  /** Stops every child (a bridge concludes its calls on SIGTERM), then drops the database, then exits. */
  async function finish(): Promise<never> {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null) return;
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        if ((await Promise.race([exited, Bun.sleep(15_000).then(() => "late")])) === "late") child.kill("SIGKILL");
      }),
    );
    await dropDatabase(databaseUrl).catch(() => {});
    process.exit(); // with process.exitCode: a bench that failed says so
  }

  /**
   * Watches where the processes ran: this one (load), `entries`, and this bench's Postgres backends,
   * which are part of what is measured (call starts, reads) and so go to the SUT cores as they appear
   * (Postgres's own processes serve every database on the machine and are left where they are).
   */
  function watch(entries: Watched[], benchThreads?: Watched["threads"]) {
    if (!pinning) throw new Error("createBench without pinning");
    // every other process this one started (SIPp, wrk, the fakes): the load side
    const others = () => {
      const claimed = new Set([...entries.flatMap((e) => e.pids()), ...[...sutPids].flatMap(processTree)]);
      return processTree(process.pid).filter((pid) => pid !== process.pid && !claimed.has(pid));
    };
    return watchCores(pinning, [
      { label: "bench process (generators)", side: "load", pids: () => [process.pid], threads: benchThreads },
      ...entries,
      { label: "bench's other children", side: "load", pids: others, optional: true },
      {
        label: "postgres (this database)",
        side: "sut",
        pids: () => postgresBackends(databaseName),
        pinNew: true,
        optional: true,
      },
    ]);
  }

  return { say, databaseUrl, databaseName, env, children, spawnBun, watch, finish };
}
