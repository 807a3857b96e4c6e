// Real service processes (`bun src/bridge/main.ts`, `bun src/index.ts`, `bun src/start.ts`), for tests
// that kill them with SIGKILL or put something between them and Postgres.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { reapWithParent } from "../helpers/temporal";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export type LogLine = Record<string, unknown> & { msg?: string };

export type ServiceProcess = {
  proc: ChildProcess;
  /** every JSON log line it printed so far */
  lines: LogLine[];
  /** the first line (from the start) matching; rejects when the process exits first or after `timeoutMs` */
  waitFor(match: string | ((line: LogLine) => boolean), timeoutMs?: number): Promise<LogLine>;
};

/** Spawns `bun <script>` with `env` over the test's environment, collecting its log lines. */
export function spawnService(script: string, env: Record<string, string>): ServiceProcess {
  const proc = spawn("bun", [script], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  reapWithParent(proc.pid!, "KILL");
  const lines: LogLine[] = [];
  const wake = new Set<() => void>();
  let stderr = "";
  let buffer = "";
  proc.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  proc.stdout!.on("data", (d: Buffer) => {
    // SERVICE_LOGS=1: the process's log lines on the test's stderr, for a failure's story
    if (process.env.SERVICE_LOGS) process.stderr.write(d);
    buffer += d.toString();
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        lines.push(JSON.parse(text));
      } catch {}
    }
    for (const w of wake) w();
  });
  proc.once("exit", () => {
    for (const w of wake) w();
  });
  return {
    proc,
    lines,
    waitFor(match, timeoutMs = 60_000) {
      const test = typeof match === "string" ? (l: LogLine) => l.msg === match : match;
      const deadline = Date.now() + timeoutMs;
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.find(test);
          if (hit) return done(() => resolve(hit));
          if (proc.exitCode !== null || proc.signalCode !== null)
            return done(() => reject(new Error(`${script} exited (${proc.exitCode ?? proc.signalCode}): ${stderr}`)));
          if (Date.now() > deadline) return done(() => reject(new Error(`${script}: no ${String(match)} line`)));
        };
        const timer = setInterval(check, 200);
        const done = (settle: () => void) => {
          clearInterval(timer);
          wake.delete(check);
          settle();
        };
        wake.add(check);
        check();
      });
    },
  };
}

/** Spawns `bun <script>`; resolves once it logs `readyMsg`. */
export async function startServiceProcess(
  script: string,
  readyMsg: string,
  env: Record<string, string>,
): Promise<ChildProcess> {
  const service = spawnService(script, env);
  await service.waitFor(readyMsg);
  return service.proc;
}

/** The bridge (one process, no workers); resolves once it takes calls. */
export const startBridgeProcess = (env: Record<string, string>) =>
  startServiceProcess("src/bridge/main.ts", "bridge listening", { BRIDGE_WORKERS: "1", ...env });

/** Whether the process `pid` is still there. */
export function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILL, resolved once the process is gone. */
export function killHard(proc: ChildProcess): Promise<unknown> {
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGKILL");
  return exited;
}
