// What the test-run suites share: a bridge world whose calls a real worker places, and the wait for a run's end.
import { startWorld, type World } from "../bridge/fixtures";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";

/** A bridge world and a worker that runs the test-run workflow, placing its calls through that bridge; `env` is more of the worker's. */
export async function startRunWorld(env: Record<string, string> = {}): Promise<{ world: World; worker: TestWorker }> {
  const { address } = await ensureTemporal();
  const world = await startWorld();
  const worker = await startWorker({
    address,
    backoffBaseMs: 1_000,
    env: { BRIDGE_URL: world.bridge.url, OPENAI_BASE_URL: world.chat.baseUrl, ...env },
  });
  return { world, worker };
}

/** The run once it is completed or canceled; on a time-out, why not (the worker's last words). */
export async function untilRunEnded(world: World, worker: TestWorker, runId: string, timeoutMs = 60_000) {
  const { tenant } = world;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const run = (await tenant.org.get(`${tenant.P}/test-runs/${runId}`)).body.data;
    if (run.status === "completed" || run.status === "canceled") return run;
    if (Date.now() > until) {
      const said = worker.lines.filter((l) => String(l.msg ?? "").includes("test") || l.level === "error");
      throw new Error(
        `run still ${run.status}: ${JSON.stringify(run.counts)} ${JSON.stringify(said.slice(-5))} ${worker.stderr().slice(-600)}`,
      );
    }
    await Bun.sleep(250);
  }
}
