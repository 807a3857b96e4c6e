// bench/transfer (by hand, not CI): the relay of bridged transfers on one media thread, on loopback.
//   bun run bench transfer [--calls 100] [--seconds 20]
// Three phases in one process, each with `calls` calls whose caller side is a UDP peer sending a
// 20 ms PCMU packet every 20 ms (the calls in ten groups 2 ms apart):
//   direct   the caller's packets go straight to the destination's peer (no bridge): the floor
//   plain    an ordinary call's media on the thread: the caller's RTP in (decoded back to this
//            thread for the call), our paced RTP out
//   relayed  a bridged transfer: two sessions per call joined by `relay`, the caller's packets sent on
//            to the destination's peer
// Per phase: the media thread's CPU (from /proc, the thread is named vas-media) per call, and for
// direct and relayed the one-way delay's variation at the destination (each packet's delay less the
// smallest of its call, p50/p99 over all packets: the jitter the path adds) and the frames lost.
// The peers share this event loop, so both delay figures carry its scheduling; the relay's own
// share is relayed minus direct.
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { CallMedia } from "../../src/media/call-media";
import { codecByName } from "../../src/media/codecs";
import { startMediaThread } from "../../src/media/media-thread";
import { buildRtp, parseRtp } from "../../src/media/rtp-packet";
import { percentile } from "../lib/harness";

const { values } = parseArgs({
  options: { calls: { type: "string", default: "100" }, seconds: { type: "string", default: "20" } },
});
const calls = Number(values.calls);
const seconds = Number(values.seconds);
const say = (msg: string) => console.error(`[bench/transfer] ${msg}`);
const magic = 0x5a;

const thread = startMediaThread({
  portMin: 52_000,
  portMax: 52_000 + 4 * calls + 100,
  hostname: "127.0.0.1",
  leadMs: 60,
});
const pcmu = codecByName("PCMU")!;
const target = (port: number) => ({
  address: "127.0.0.1",
  port,
  codec: pcmu,
  dtmfPayloadType: 101,
  receiving: true,
  sending: true,
});

type Peer = Awaited<ReturnType<typeof peer>>;
/** A UDP peer: sends indexed packets on demand, records when each indexed packet arrived. */
async function peer() {
  const arrivals = new Map<number, number>();
  const socket = await Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: {
      data(_s, data) {
        const packet = parseRtp(data);
        if (!packet || packet.payload[4] !== magic) return;
        const p = packet.payload;
        arrivals.set(((p[0]! << 24) | (p[1]! << 16) | (p[2]! << 8) | p[3]!) >>> 0, performance.now());
      },
      error() {},
    },
  });
  return { socket, arrivals };
}

/** Sends packet i of every call every 20 ms to where `to(call)` says, for `seconds`; the send times. */
async function stream(senders: Peer[], to: (call: number) => number) {
  const sent = senders.map(() => [] as number[]);
  const payload = new Uint8Array(160).fill(0xff);
  payload[4] = magic;
  const frames = seconds * 50;
  const started = performance.now();
  // the calls' packets spread over the 20 ms in ten groups (as independent phones would send them),
  // not one burst of all calls at once
  const groups = Math.min(10, senders.length);
  for (let i = 0; i < frames; i++) {
    payload[0] = i >>> 24;
    payload[1] = (i >>> 16) & 0xff;
    payload[2] = (i >>> 8) & 0xff;
    payload[3] = i & 0xff;
    for (let g = 0; g < groups; g++) {
      const wait = started + i * 20 + g * (20 / groups) - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      for (let c = g; c < senders.length; c += groups) {
        const packet = buildRtp(
          { payloadType: 0, marker: i === 0, sequence: i & 0xffff, timestamp: i * 160, ssrc: c + 1 },
          payload,
        );
        senders[c]!.socket.send(packet, to(c), "127.0.0.1");
        sent[c]!.push(performance.now());
      }
    }
  }
  await Bun.sleep(200); // the last packets' way
  return sent;
}

/** Delay variation (ms) at the receivers and frames lost, over all calls. */
function delays(sent: number[][], receivers: Peer[]) {
  const variation: number[] = [];
  let lost = 0;
  for (const [c, times] of sent.entries()) {
    const arrivals = receivers[c]!.arrivals;
    const delay = times.flatMap((at, i) => (arrivals.has(i) ? [arrivals.get(i)! - at] : []));
    lost += times.length - delay.length;
    const floor = Math.min(...delay);
    for (const d of delay) variation.push(d - floor);
  }
  return { p50: percentile(variation, 50), p99: percentile(variation, 99), lost };
}

/** The media thread's CPU seconds so far (utime + stime of the thread named vas-media). */
function mediaThreadCpu(): number {
  for (const tid of readdirSync("/proc/self/task")) {
    const comm = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
    if (comm !== "vas-media") continue;
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks, USER_HZ 100
  }
  throw new Error("no vas-media thread");
}

async function measureCpu<T>(run: () => Promise<T>) {
  const before = mediaThreadCpu();
  const wall = performance.now();
  const result = await run();
  const cpu = mediaThreadCpu() - before;
  return { result, cpuPerCallPct: (100 * cpu) / ((performance.now() - wall) / 1000) / calls };
}

const open = async (): Promise<CallMedia> =>
  thread.open(
    { onAudio: () => {}, onDigit: () => {}, onTimeout: () => {} },
    { timeoutMs: 600_000, rtcpIntervalMs: 5_000 },
  );

const rows: Record<string, unknown>[] = [];

say(`direct: ${calls} streams peer to peer for ${seconds} s...`);
{
  const callers = await Promise.all(Array.from({ length: calls }, peer));
  const humans = await Promise.all(Array.from({ length: calls }, peer));
  const sent = await stream(callers, (c) => humans[c]!.socket.port);
  rows.push({ phase: "direct", "media thread CPU %/call": "-", ...named(delays(sent, humans)) });
  for (const p of [...callers, ...humans]) p.socket.close();
}

say(`plain: ${calls} calls on the media thread for ${seconds} s...`);
{
  const callers = await Promise.all(Array.from({ length: calls }, peer));
  const media = await Promise.all(callers.map(open));
  for (const [c, m] of media.entries()) {
    await m.configure(target(callers[c]!.socket.port));
    m.start();
  }
  const { cpuPerCallPct } = await measureCpu(() => stream(callers, (c) => media[c]!.port));
  rows.push({ phase: "plain", "media thread CPU %/call": cpuPerCallPct.toFixed(3) });
  await Promise.all(media.map((m) => m.close()));
  for (const p of callers) p.socket.close();
}

say(`relayed: ${calls} bridged calls (two sessions each) for ${seconds} s...`);
{
  const callers = await Promise.all(Array.from({ length: calls }, peer));
  const humans = await Promise.all(Array.from({ length: calls }, peer));
  const legs = await Promise.all(callers.map(async () => [await open(), await open()] as const));
  for (const [c, [a, b]] of legs.entries()) {
    await a.configure(target(callers[c]!.socket.port));
    await b.configure(target(humans[c]!.socket.port));
    a.start();
    b.start();
    a.relay(b);
  }
  const { result: sent, cpuPerCallPct } = await measureCpu(() => stream(callers, (c) => legs[c]![0].port));
  rows.push({ phase: "relayed", "media thread CPU %/call": cpuPerCallPct.toFixed(3), ...named(delays(sent, humans)) });
  await Promise.all(legs.flat().map((m) => m.close()));
  for (const p of [...callers, ...humans]) p.socket.close();
}

function named(d: ReturnType<typeof delays>) {
  return { "delay variation p50 ms": d.p50.toFixed(2), "p99 ms": d.p99.toFixed(2), "frames lost": d.lost };
}

console.table(rows);
await thread.stop();
process.exit(0);
