// bench/ws-thread (by hand, not CI): N websocket calls' agent frames paced in the event loop (the old
// way, BRIDGE_WS_THREAD=false) against the websocket thread, side by side in one run, while the event
// loop stalls now and then as a busy bridge's does (call start-ups, provider bursts, collections).
//   bun run bench ws-thread [--calls 500] [--seconds 10] [--stall-every 200] [--stall-ms 30]
// Each call's playout gets its whole reply at once (a provider delivers faster than real time) and
// hands 20 ms frames to its socket; the callers run on a thread of their own and time the gaps.
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
  },
});
const calls = Number(values.calls);
const seconds = Number(values.seconds);
const stallEvery = Number(values["stall-every"]);
const stallMs = Number(values["stall-ms"]);
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
  const result = {
    mode,
    p50: percentile(jitters, 50),
    p99: percentile(jitters, 99),
    max: percentile(jitters, 100),
    frames,
    expected,
    stalls,
  };
  say(
    `${mode}: ${calls} calls, ${stalls} stalls of ${stallMs} ms: jitter p50 ${result.p50.toFixed(1)} p99 ${result.p99.toFixed(1)} max ${result.max.toFixed(1)} ms, frames ${frames}/${expected}`,
  );
  return result;
}

say(`${calls} calls x ${seconds} s of agent audio, the event loop stalled ${stallMs} ms every ${stallEvery} ms`);
const loop = await step("event loop");
const thread = await step("ws thread");
console.log(`\nbench/ws-thread: ${calls} calls, ${seconds} s, ${stallMs} ms stalls every ${stallEvery} ms`);
for (const r of [loop, thread])
  console.log(
    `${r.mode.padEnd(10)}  jitter p50 ${r.p50.toFixed(1)}  p99 ${r.p99.toFixed(1)}  max ${r.max.toFixed(1)} ms  frames ${r.frames}/${r.expected} (${r.expected - r.frames} not arrived)`,
  );
console.log(`p99 jitter, ws thread / event loop: ${(thread.p99 / loop.p99).toFixed(2)}`);
process.exit(0);
