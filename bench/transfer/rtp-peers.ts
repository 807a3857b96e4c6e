// bench/transfer's phones, in a process of their own so that the bench's (and the media thread's)
// scheduling is not in what they measure: `calls` callers and `calls` humans on loopback UDP.
//   bun bench/transfer/rtp-peers.ts <calls> <seconds>
// Prints {"callers":[ports],"humans":[ports]}, reads one line {"to":[port per caller],"measure"}, then each
// caller sends an indexed 20 ms PCMU packet every 20 ms there (the calls in ten groups 2 ms apart,
// as independent phones would, not one burst), and the humans note when each packet arrives. Prints
// {"variation":{p50,p99},"lost"}: each packet's one-way delay less the smallest of its call (the
// jitter the path adds), over all packets, and the packets that never came; {} when not `measure`
// (the packets end at the bridge: a plain call's media).
import { buildRtp, parseRtp } from "../../src/media/rtp-packet";
import { percentile } from "../lib/harness";

const [calls, seconds] = process.argv.slice(2).map(Number) as [number, number];
const magic = 0x5a;

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

const callers = await Promise.all(Array.from({ length: calls }, peer));
const humans = await Promise.all(Array.from({ length: calls }, peer));
console.log(JSON.stringify({ callers: callers.map((p) => p.socket.port), humans: humans.map((p) => p.socket.port) }));
let to: number[] = [];
let measure = true;
for await (const line of console) {
  ({ to, measure } = JSON.parse(line));
  break;
}
if (to.length !== calls) process.exit(1); // the bench went away

const sent = callers.map(() => [] as number[]);
const payload = new Uint8Array(160).fill(0xff);
payload[4] = magic;
const groups = Math.min(10, calls);
const started = performance.now();
for (let i = 0; i < seconds * 50; i++) {
  payload[0] = i >>> 24;
  payload[1] = (i >>> 16) & 0xff;
  payload[2] = (i >>> 8) & 0xff;
  payload[3] = i & 0xff;
  for (let g = 0; g < groups; g++) {
    const wait = started + i * 20 + g * (20 / groups) - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    for (let c = g; c < calls; c += groups) {
      const packet = buildRtp(
        { payloadType: 0, marker: i === 0, sequence: i & 0xffff, timestamp: i * 160, ssrc: c + 1 },
        payload,
      );
      callers[c]!.socket.send(packet, to[c]!, "127.0.0.1");
      sent[c]!.push(performance.now());
    }
  }
}
await Bun.sleep(200); // the last packets' way

const variation: number[] = [];
let lost = 0;
for (const [c, times] of sent.entries()) {
  const arrivals = humans[c]!.arrivals;
  const delay = times.flatMap((at, i) => (arrivals.has(i) ? [arrivals.get(i)! - at] : []));
  lost += times.length - delay.length;
  const floor = Math.min(...delay);
  for (const d of delay) variation.push(d - floor);
}
console.log(
  JSON.stringify(
    measure ? { variation: { p50: percentile(variation, 50), p99: percentile(variation, 99) }, lost } : {},
  ),
);
for (const p of [...callers, ...humans]) p.socket.close();
process.exit(0);
