// Real service processes (`bun src/bridge/main.ts`, `bun src/index.ts`), for tests that kill them with
// SIGKILL or put something between them and Postgres.
import { spawn, type ChildProcess } from "node:child_process";
import { reapWithParent } from "../helpers/temporal";

/** Spawns `bun <script>` with `env` over the test's environment; resolves once it logs `readyMsg`. */
export function startServiceProcess(
  script: string,
  readyMsg: string,
  env: Record<string, string>,
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const proc = spawn("bun", [script], {
      env: { ...process.env, LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    reapWithParent(proc.pid!, "KILL");
    let stderr = "";
    proc.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    proc.stdout!.on("data", (d: Buffer) => {
      // SERVICE_LOGS=1: the process's log lines on the test's stderr, for a failure's story
      if (process.env.SERVICE_LOGS) process.stderr.write(d);
      if (d.toString().includes(`"${readyMsg}"`)) resolve(proc);
    });
    proc.once("exit", (code) => reject(new Error(`${script} exited (${code}): ${stderr}`)));
  });
}

/** The bridge (one process, no workers); resolves once it takes calls. */
export const startBridgeProcess = (env: Record<string, string>) =>
  startServiceProcess("src/bridge/main.ts", "bridge listening", { BRIDGE_WORKERS: "1", ...env });

/** SIGKILL, resolved once the process is gone. */
export function killHard(proc: ChildProcess): Promise<unknown> {
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGKILL");
  return exited;
}
