// bench/ws-thread (by hand, not CI): N websocket calls' agent frames paced in the event loop (the old
// way, BRIDGE_WS_THREAD=false) against the websocket thread, side by side in one run, while the event
// loop stalls now and then as a busy bridge's does (call start-ups, provider bursts, collections).
//   bun run bench ws-thread [--calls 500] [--seconds 10] [--stall-every 200] [--stall-ms 30] [--rounds 1]
// ROUNDS alternates the two (loop, thread, loop, thread, ...) so that a machine whose load changes
// during the run weighs on both alike; the figures are over all rounds, with the load average.
// Each call's playout gets its whole reply at once (a provider delivers faster than real time) and
// hands 20 ms frames to its socket; the callers run on a thread of their own and time the gaps.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import type { ServerWebSocket } from "bun";
import { pcmToBytes } from "../../src/audio/pcm";
import type { WireSocket } from "../../src/bridge/wire-socket";
import { startWsThread } from "../../src/bridge/ws-thread";
import { sharedTicker } from "../../src/calls/frame-ticker";
import { Playout } from "../../src/calls/playout";
import { percentile } from "../lib/harness";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "500" },
    seconds: { type: "string", default: "10" },
    "stall-every": { type: "string", default: "200" },
    "stall-ms": { type: "string", default: "30" },
    rounds: { type: "string", default: "1" },
  },
});
const calls = Number(values.calls);
const seconds = Number(values.seconds);
const stallEvery = Number(values["stall-every"]);
const stallMs = Number(values["stall-ms"]);
const rounds = Number(values.rounds);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const say = (msg: string) => console.error(`[bench/ws-thread] ${msg}`);
const reply = new Int16Array(8000 * seconds).fill(1000); // 8 kHz, the whole step long

type Server = { port: number; sockets: WireSocket[]; stop(): Promise<unknown> };

function inLoop(): Server {
  const sockets: WireSocket[] = [];
  const server = Bun.serve<object>({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req, srv) => (srv.upgrade(req, { data: {} }) ? undefined : new Response(null, { status: 426 })),
    websocket: {
      open(ws: ServerWebSocket<object>) {
        sockets.push({
          sendText: (t) => void ws.send(t),
          sendBinary: (b) => void ws.send(b),
          close: (c, r) => ws.close(c, r),
          sendFrame: (f) => void ws.send(f),
          clearFrames: () => {},
          pauseFrames: () => {},
          resumeFrames: () => {},
          frameLeadMs: 0,
        });
      },
      message() {},
    },
  });
  return { port: server.port!, sockets, stop: async () => server.stop(true) };
}

async function onThread(): Promise<Server> {
  const sockets: WireSocket[] = [];
  const thread = await startWsThread<object>(
    { port: 0, hostname: "127.0.0.1", reusePort: false, idleTimeout: 60, leadMs: 60 },
    {
      fetch: (req, srv) => (srv.upgrade(req, { data: {} }) ? undefined : new Response(null, { status: 426 })),
      open: (_data, socket) => void sockets.push(socket),
      message() {},
      close() {},
    },
  );
  return { port: thread.port, sockets, stop: () => thread.stop() };
}

async function step(mode: "event loop" | "ws thread") {
  const server = mode === "ws thread" ? await onThread() : inLoop();
  const callers = new Worker(new URL("./callers-worker.ts", import.meta.url));
  const ask = <T>(message: unknown) =>
    new Promise<T>((resolve) => {
      callers.onmessage = ({ data }) => resolve(data);
      callers.postMessage(message);
    });
  await ask({ url: `ws://127.0.0.1:${server.port}/`, calls });
  while (server.sockets.length < calls) await Bun.sleep(10);
  const playouts = server.sockets.map((socket) => {
    const playout = new Playout(8000, (frame) => socket.sendFrame(pcmToBytes(frame)), sharedTicker, socket.frameLeadMs);
    playout.push(reply);
    playout.start();
    return playout;
  });
  const started = performance.now();
  let stalls = 0;
  while (performance.now() - started < seconds * 1000 - 500) {
    await Bun.sleep(stallEvery);
    const until = performance.now() + stallMs;
    while (performance.now() < until) {} // the event loop busy with something else
    stalls++;
  }
  await Bun.sleep(1000);
  const { jitters, frames } = await ask<{ jitters: number[]; frames: number }>("report");
  for (const p of playouts) p.stop();
  callers.terminate();
  await server.stop();
  const expected = calls * (reply.length / 160);
  say(
    `${mode}: ${calls} calls, ${stalls} stalls of ${stallMs} ms: jitter p50 ${percentile(jitters, 50).toFixed(1)} p99 ${percentile(jitters, 99).toFixed(1)} max ${percentile(jitters, 100).toFixed(1)} ms, frames ${frames}/${expected}; load average ${load()}`,
  );
  return { jitters, frames, expected };
}

say(
  `${calls} calls x ${seconds} s of agent audio, the event loop stalled ${stallMs} ms every ${stallEvery} ms, ${rounds} round(s); load average ${load()}`,
);
const modes = ["event loop", "ws thread"] as const;
const all = new Map(modes.map((m) => [m, { jitters: [] as number[], frames: 0, expected: 0 }]));
for (let round = 0; round < rounds; round++)
  for (const mode of modes) {
    const r = await step(mode);
    const sum = all.get(mode)!;
    for (const j of r.jitters) sum.jitters.push(j);
    sum.frames += r.frames;
    sum.expected += r.expected;
  }
console.log(
  `\nbench/ws-thread: ${calls} calls, ${seconds} s, ${stallMs} ms stalls every ${stallEvery} ms, ${rounds} round(s) alternated; load average at the end ${load()}`,
);
const p99 = (mode: (typeof modes)[number]) => percentile(all.get(mode)!.jitters, 99);
for (const [mode, r] of all)
  console.log(
    `${mode.padEnd(10)}  jitter p50 ${percentile(r.jitters, 50).toFixed(1)}  p99 ${p99(mode).toFixed(1)}  max ${percentile(r.jitters, 100).toFixed(1)} ms  frames ${r.frames}/${r.expected} (${r.expected - r.frames} not arrived)`,
  );
console.log(`p99 jitter, ws thread / event loop: ${(p99("ws thread") / p99("event loop")).toFixed(2)}`);
process.exit(0);
