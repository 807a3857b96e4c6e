// Requests sent from another local address (each 127.0.0.x is another client for the per-address
// throttle of failed authentication), through requests-from-script.ts under Node.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export type Answer = { status: number; retryAfter: string | null; body: any };
export type Sent = { url: string; headers?: Record<string, string>; method?: string; body?: string };

/** The requests in order from `localAddress`, and their answers. */
export async function requestsFrom(localAddress: string, requests: Sent[]): Promise<Answer[]> {
  const list = JSON.stringify(requests.map((r) => ({ headers: {}, ...r })));
  const { stdout } = await promisify(execFile)(
    "node",
    ["--import", "tsx", "test/helpers/requests-from-script.ts", localAddress, list],
    { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as Answer[];
}
