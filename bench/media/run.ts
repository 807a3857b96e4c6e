// bench/media (by hand, not CI): the JavaScript work one SIP call does per 20 ms frame on the media
// path, both ways, the old path (bench/media/baseline.ts) against the current one, in one run.
//   bun run bench media [--frames 100000] [--rounds 3]
// One frame: the agent's side (playout -> paced RTP sender -> packet handed to the socket, and the
// RTCP reporter's look at it) and the caller's side (a datagram parsed -> jitter buffer -> decoded
// for the call -> the frame for an 8 kHz g711_ulaw provider, base64 as its websocket event carries
// it). Both run on the same hand-moved clock; the socket calls themselves are left out (the same
// syscall either way). Each path runs in its own process with JSC's GC log on, which gives the
// collections during the measured frames and the bytes allocated (heap growth between them). The
// paths alternate for `rounds` rounds (the machine is shared); the table gives each one's median.
import { parseArgs } from "node:util";
import { fullGC } from "bun:jsc";
import type { FrameTicker, Tick } from "../../src/calls/frame-ticker";
import { Playout } from "../../src/calls/playout";
import { codecByName } from "../../src/media/codecs";
import { JitterBuffer } from "../../src/media/jitter-buffer";
import { RtcpReporter } from "../../src/media/rtcp-reporter";
import { buildRtp, parseRtp, type RtpPacket } from "../../src/media/rtp-packet";
import { RtpSender } from "../../src/media/rtp-sender";
import { OldJitterBuffer, oldParseRtp, OldPlayout, oldRtcpSent, OldRtpSender, oldToProvider } from "./baseline";

const { values } = parseArgs({
  options: {
    frames: { type: "string", default: "100000" },
    rounds: { type: "string", default: "3" },
    child: { type: "string" },
  },
});
const frames = Number(values.frames);
const say = (msg: string) => console.error(`[bench/media] ${msg}`);
type Path = "old" | "new";

if (values.child) await child(values.child as Path);
else await parent();

async function parent() {
  const runs: Record<Path, Awaited<ReturnType<typeof measure>>[]> = { old: [], new: [] };
  const rounds = Number(values.rounds);
  for (let round = 1; round <= rounds; round++) {
    for (const path of ["old", "new"] as const) {
      say(`round ${round}/${rounds}, ${path} path: ${frames} frames in a child process...`);
      runs[path].push(await measure(path));
    }
  }
  say(
    `ns/frame, old: ${runs.old.map((r) => r["ns/frame"]).join(", ")}; new: ${runs.new.map((r) => r["ns/frame"]).join(", ")}`,
  );
  const median = (path: Path) => runs[path].sort((a, b) => a["ns/frame"] - b["ns/frame"])[Math.floor(rounds / 2)]!;
  console.table([
    { path: "old", ...median("old") },
    { path: "new", ...median("new") },
  ]);
}

/** Runs one path in a child with the GC log on; reads the collections of the measured frames. */
async function measure(path: Path) {
  const proc = Bun.spawn(["bun", import.meta.path, "--child", path, "--frames", String(frames)], {
    env: { ...process.env, BUN_JSC_logGC: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${path} child exited ${code}: ${err.slice(-2000)}`);
  // JSC's log is not ordered with our own writes: the measured frames lie between the child's last
  // two full collections (the one before them and the one after); a collection's start and end may
  // be logged on different lines
  const collections = [...err.matchAll(/START \S+ (\d+)kb => (\w+)Collection[\s\S]*?=> (\d+)kb, p=/g)];
  const fulls = collections.flatMap((m, i) => (m[2] === "Full" ? [i] : []));
  if (fulls.length < 2) throw new Error(`${path} child: no GC log (BUN_JSC_logGC) to read`);
  const [start, end] = fulls.slice(-2) as [number, number];
  const before = collections[start];
  const during = collections.slice(start + 1, end + 1);
  // heap growth from each collection's end to the next one's start: what was allocated in between
  let heapAfter = Number(before?.[3] ?? 0);
  let allocatedKb = 0;
  for (const m of during) {
    allocatedKb += Math.max(0, Number(m[1]) - heapAfter);
    heapAfter = Number(m[3]);
  }
  const { nsPerFrame } = JSON.parse(out.trim().split("\n").at(-1)!);
  const perThousand = 1000 / frames;
  return {
    "ns/frame": Math.round(nsPerFrame),
    "KB allocated/1000 frames": Math.round(allocatedKb * perThousand),
    "GCs/1000 frames": Number(((during.length - 1) * perThousand).toFixed(3)), // minus the closing full GC
  };
}

async function child(path: Path) {
  // the clock the bench moves: an array, so that walking it allocates nothing (a Set's iterator may)
  let now = 0;
  const ticks: Tick[] = [];
  const clock: FrameTicker = {
    now: () => now,
    add: (t) => void (ticks.includes(t) || ticks.push(t)),
    remove: (t) => void (ticks.includes(t) && ticks.splice(ticks.indexOf(t), 1)),
  };
  const rtcp = await RtcpReporter.open("127.0.0.1", 0, {
    clockRate: 8000,
    intervalMs: 3_600_000,
    rtpDestination: () => null,
    receivedJitterMs: () => 0,
    refusalOf: () => null,
  });
  if (!rtcp) throw new Error("no socket for the RTCP reporter");
  // the agent's speech arrives in provider-sized chunks (100 ms), the caller's as 20 ms datagrams
  const chunk = Int16Array.from({ length: 800 }, (_, i) => Math.round(8000 * Math.sin(i / 3)));
  const payload = Uint8Array.from({ length: 160 }, (_, i) => (i * 37) & 0xff);
  const header = { payloadType: 0, marker: false, sequence: 0, timestamp: 0, ssrc: 0x5eed };
  const datagram = Buffer.from(buildRtp(header, payload));
  const pcmu = codecByName("PCMU")!;
  let sink = 0; // what each path produced, so that nothing is optimised away

  const agent = path === "new" ? newAgent() : oldAgent();
  const caller = path === "new" ? newCaller() : oldCaller();

  function newAgent() {
    const sender = new RtpSender(pcmu, (packet) => rtcp!.sent(packet), clock);
    const playout = new Playout(8000, (frame) => sender.push(frame), clock);
    sender.start();
    playout.start();
    return (samples: Int16Array) => playout.push(samples);
  }
  function oldAgent() {
    const sender = new OldRtpSender((packet) => (sink += oldRtcpSent(packet)), clock);
    const playout = new OldPlayout((frame) => sender.push(frame), clock);
    sender.start();
    return (samples: Int16Array) => playout.push(samples);
  }
  function newCaller() {
    const jitter = new JitterBuffer();
    const ready = (packet: RtpPacket) => {
      sink += pcmu.decode(packet.payload).length; // the call's copy (messages, recording, VAD)
      sink += (packet.payload as Buffer).toString("base64").length; // passthrough (a view into the datagram)
    };
    return (data: Buffer) => {
      const packet = parseRtp(data)!;
      rtcp!.receivedRtp(packet);
      jitter.push(packet, ready);
    };
  }
  function oldCaller() {
    const jitter = new OldJitterBuffer();
    return (data: Buffer) => {
      const packet = oldParseRtp(data)!;
      rtcp!.receivedRtp(packet);
      for (const ready of jitter.push(packet)) {
        const pcm = pcmu.decode(ready.payload);
        sink += pcm.length + oldToProvider(pcm).length;
      }
    };
  }

  let frame = 0;
  const run = (n: number) => {
    for (let i = 0; i < n; i++, frame++) {
      if (frame % 5 === 0) agent(chunk);
      header.sequence = frame & 0xffff;
      datagram.writeUInt16BE(header.sequence, 2);
      datagram.writeUInt32BE((frame * 160) >>> 0, 4);
      caller(datagram);
      for (let step = 0; step < 10; step++) {
        now += 2; // the shared ticker's 2 ms
        for (let t = 0; t < ticks.length; t++) ticks[t]!(now);
      }
    }
  };

  run(Math.min(20_000, frames)); // warm-up: the JIT settles
  fullGC();
  const started = performance.now();
  run(frames);
  const elapsedMs = performance.now() - started;
  fullGC();
  rtcp.close();
  console.log(JSON.stringify({ nsPerFrame: (elapsedMs * 1e6) / frames, sink }));
}
