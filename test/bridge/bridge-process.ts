// The real `start:bridge` process (bun src/bridge/main.ts), for tests that kill it with SIGKILL.
import { spawn, type ChildProcess } from "node:child_process";
import { reapWithParent } from "../helpers/temporal";

/** Starts the bridge (one process, no workers) with `env` over the test's environment; resolves once it listens. */
export function startBridgeProcess(env: Record<string, string>): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const proc = spawn("bun", ["src/bridge/main.ts"], {
      env: { ...process.env, LOG_LEVEL: "info", BRIDGE_WORKERS: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    reapWithParent(proc.pid!, "KILL");
    let stderr = "";
    proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    proc.stdout!.on("data", (d: Buffer) => d.toString().includes('"bridge listening"') && resolve(proc));
    proc.once("exit", (code) => reject(new Error(`bridge exited (${code}): ${stderr}`)));
  });
}

/** SIGKILL, resolved once the process is gone. */
export function killHard(proc: ChildProcess): Promise<unknown> {
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGKILL");
  return exited;
}
