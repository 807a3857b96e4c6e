// `start:bridge` with BRIDGE_WORKERS > 1: one bridge process per worker (each its own event loop, so
// one worker's call start-up or signalling never delays another's media pacing), started with its own
// instance id and SIP port (config.bridgeWorkerEnv; the RTP range is shared), and started again when it dies.
// Websocket calls share BRIDGE_PORT through SO_REUSEPORT; the kernel spreads connections over workers.
import type { Subprocess } from "bun";
import { bridgeWorkerEnv, type Config } from "../config";
import { restartBackoff } from "../lib/restart-policy";
import { log } from "../log";
import { metricsAggregator } from "../metrics/bridge-workers";

const mainScript = new URL("./main.ts", import.meta.url).pathname;
/** How long a stopping worker may take to end its calls before it is killed. */
const stopGraceMs = 30_000;

type Slot = {
  index: number;
  proc: Subprocess | null;
  backoff: ReturnType<typeof restartBackoff>;
  restart: ReturnType<typeof setTimeout> | null;
};

export function superviseBridgeWorkers(config: Config) {
  const slots: Slot[] = Array.from({ length: config.bridge.workers }, (_, index) => ({
    index,
    proc: null,
    backoff: restartBackoff(),
    restart: null,
  }));
  let stopping = false;
  // a scrape of any worker is answered with the sum of all of them
  const aggregateMetrics = metricsAggregator(() => slots.flatMap((s) => (s.proc ? [s.proc] : [])));

  function start(slot: Slot) {
    slot.restart = null;
    slot.backoff.started();
    const proc: Subprocess = Bun.spawn([process.execPath, mainScript], {
      env: bridgeWorkerEnv(config, slot.index),
      stdio: ["ignore", "inherit", "inherit"],
      ipc: aggregateMetrics,
      onExit: (_p, code, signal): void => exited(slot, proc, code, signal),
    });
    slot.proc = proc;
    log.info("bridge worker started", { worker: slot.index, pid: proc.pid });
  }

  function exited(slot: Slot, proc: Subprocess, code: number | null, signal: number | NodeJS.Signals | null) {
    if (slot.proc !== proc) return;
    slot.proc = null;
    if (stopping) return;
    const { livedMs, delayMs } = slot.backoff.exited();
    log.error("bridge worker exited; restarting", { worker: slot.index, code, signal, livedMs, delayMs });
    slot.restart = setTimeout(() => start(slot), delayMs);
  }

  for (const slot of slots) start(slot);

  return {
    /** The live workers' process ids, by worker index (null while one is being restarted). */
    get pids() {
      return slots.map((s) => s.proc?.pid ?? null);
    },
    /** Passes the signal on (each worker ends its calls as bridge-shutdown) and waits for every worker. */
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      stopping = true;
      const running = slots.flatMap((slot) => {
        if (slot.restart) clearTimeout(slot.restart);
        return slot.proc ? [slot.proc] : [];
      });
      for (const proc of running) proc.kill(signal);
      const kill = setTimeout(() => {
        for (const proc of running) proc.kill("SIGKILL");
      }, stopGraceMs);
      await Promise.all(running.map((proc) => proc.exited));
      clearTimeout(kill);
    },
  };
}

/**
 * In a worker: ends the process when the supervisor is gone (killed with SIGKILL it cannot pass a
 * signal on), so no orphan keeps the ports and the instance id.
 */
export function exitWithSupervisor(onOrphaned: () => void) {
  const supervisor = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === supervisor) return;
    clearInterval(timer);
    onOrphaned();
  }, 1_000);
  timer.unref();
}
