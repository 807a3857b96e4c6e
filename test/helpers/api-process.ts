// The API as its own process (`bun src/index.ts`) on a free port against the run's database: for tests
// that need several instances, or the memory of one.
import type { ChildProcess } from "node:child_process";
import { spawnService } from "../bridge/bridge-process";
import { freePort } from "./temporal";

export type ApiProcess = { url: string; proc: ChildProcess; stop: () => void };

export async function spawnApi(env: Record<string, string> = {}): Promise<ApiProcess> {
  const port = await freePort();
  const { proc } = spawnService("src/index.ts", { PORT: String(port), LOG_LEVEL: "warn", ...env });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    // it listens before its migrations are done: until then its API routes answer 503
    const up = await fetch(`${url}/api/v1/vendors`).then(
      (r) => r.status !== 503,
      () => false,
    );
    if (up) break;
    if (i > 400) throw new Error("the API did not start");
    await Bun.sleep(50);
  }
  return { url, proc, stop: () => void proc.kill() };
}
