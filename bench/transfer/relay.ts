// bench/transfer, the relay: bridged transfers' media on one media thread (one bridge worker), on
// loopback, the phones in a process of their own (rtp-peers.ts). Four phases of `calls` calls:
//   direct    the caller's packets go straight to the human (no bridge): the floor
//   plain     an ordinary call's media on the thread: the caller's RTP in (decoded back to this
//             thread for the call), our paced RTP out
//   relayed   a bridged transfer: two sessions per call joined by `relay`, the caller's packets sent on
//             to the human
//   rtpengine the same calls through rtpengine (rtpengine.ts: userspace forwarding, ng protocol)
// Per phase: the relay's CPU per call (the media thread's, named vas-media, or rtpengine's whole
// process, from /proc), and but for plain the delay variation at the human and the frames lost
// (rtp-peers.ts). Cores (bench/lib/pinning.ts): the media thread and rtpengine on the SUT cores, this
// process's other threads and the peers on the load cores; each phase says whether that held.
import { readdirSync, readFileSync } from "node:fs";
import type { CallMedia } from "../../src/media/call-media";
import { codecByName } from "../../src/media/codecs";
import { startMediaThread } from "../../src/media/media-thread";
import { cpuSeconds } from "../calls-ws/proc-stats";
import type { createBench } from "../lib/harness";
import { parseCpuList, pin, type Pinning, type ThreadState, type Watched } from "../lib/pinning";
import { startRtpengine } from "./rtpengine";

type Watch = ReturnType<typeof createBench>["watch"];

type PeerResult = { variation?: { p50: number; p99: number }; lost?: number };

/** The peers' process: its ports, then `run(to, measure)` streams for `seconds` and gives its figures. */
async function startPeers(calls: number, seconds: number) {
  const child = Bun.spawn(["bun", new URL("./rtp-peers.ts", import.meta.url).pathname, `${calls}`, `${seconds}`], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines = (async function* () {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop()!; // an unfinished line waits for the rest
      yield* lines;
    }
    throw new Error(`rtp-peers exited (${await child.exited})`);
  })();
  const next = async () => JSON.parse((await lines.next()).value as string);
  const ports: { callers: number[]; humans: number[] } = await next();
  return {
    ...ports,
    async run(to: number[], measure: boolean): Promise<PeerResult> {
      child.stdin.write(`${JSON.stringify({ to, measure })}\n`);
      await child.stdin.flush();
      const result = await next();
      await child.exited;
      return result;
    },
  };
}

const isMediaThread = (name: string) => name === "vas-media";
/** the media thread, and the helper threads it started after it was pinned (they inherit its cores) */
const onMediaCores = (pinning: Pinning) => (t: ThreadState) =>
  isMediaThread(t.name) || parseCpuList(t.allowed).every((c) => pinning.sutCores.includes(c));

/** The media thread's id (the thread names itself once it runs). */
function mediaThreadTid(): string {
  const tid = readdirSync("/proc/self/task").find((t) =>
    isMediaThread(readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim()),
  );
  if (!tid) throw new Error("no vas-media thread");
  return tid;
}

/** The media thread's CPU seconds so far (utime + stime). */
function mediaThreadCpu(): number {
  const fields = readFileSync(`/proc/self/task/${mediaThreadTid()}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks, USER_HZ 100
}

export async function measureRelay(
  calls: number,
  seconds: number,
  say: (msg: string) => void,
  pinning: Pinning,
  watch: Watch,
) {
  const thread = startMediaThread({
    portMin: 52_000,
    portMax: 52_000 + 4 * calls + 100,
    hostname: "127.0.0.1",
    leadMs: 60,
    allowCidrs: ["127.0.0.0/8"],
  });
  const mediaThread: Watched = {
    label: "media thread (vas-media)",
    side: "sut",
    pids: () => [process.pid],
    threads: onMediaCores(pinning),
  };
  const pcmu = codecByName("PCMU")!;
  const target = (port: number) => ({
    address: "127.0.0.1",
    port,
    codec: pcmu,
    dtmfPayloadType: 101,
    receiving: true,
    sending: true,
  });
  const open = async (): Promise<CallMedia> =>
    thread.open(
      { onAudio: () => {}, onDigit: () => {}, onTimeout: () => {} },
      { timeoutMs: 600_000, rtcpIntervalMs: 5_000 },
    );
  // the thread was born on this process's (load) cores: it alone goes to the SUT's, once a first
  // session (opened and closed at once) shows it runs
  await (await open()).close();
  pin(Number(mediaThreadTid()), pinning.sut, { thread: true });
  /** The peers stream to `to`; the relay's CPU per call meanwhile (`cpu`: its seconds so far), the peers' figures, where each ran. */
  const measured = async (
    peers: Awaited<ReturnType<typeof startPeers>>,
    to: number[],
    measure: boolean,
    relay: { cpu: () => number; watched: Watched } = { cpu: mediaThreadCpu, watched: mediaThread },
  ) => {
    const cores = watch([relay.watched], (t) => !onMediaCores(pinning)(t));
    const before = relay.cpu();
    const wall = performance.now();
    const result = await peers.run(to, measure);
    const cpu = relay.cpu() - before;
    const report = cores.stop();
    say(report.text);
    return { ...result, cpuPerCallPct: (100 * cpu) / ((performance.now() - wall) / 1000) / calls, valid: report.valid };
  };
  const row = (phase: string, r: Awaited<ReturnType<typeof measured>>) => ({
    phase,
    "relay CPU %/call": phase === "direct" ? "-" : r.cpuPerCallPct.toFixed(3),
    "delay variation p50 ms": r.variation?.p50.toFixed(2) ?? "-",
    "p99 ms": r.variation?.p99.toFixed(2) ?? "-",
    "frames lost": r.lost ?? "-",
    cores: r.valid ? "valid" : "INVALID",
  });
  const rows: ReturnType<typeof row>[] = [];

  say(`relay, direct: ${calls} streams peer to peer for ${seconds} s...`);
  {
    const peers = await startPeers(calls, seconds);
    rows.push(row("direct", await measured(peers, peers.humans, true)));
  }

  say(`relay, plain: ${calls} calls on the media thread for ${seconds} s...`);
  {
    const peers = await startPeers(calls, seconds);
    const media = await Promise.all(peers.callers.map(open));
    for (const [c, m] of media.entries()) {
      await m.configure(target(peers.callers[c]!));
      m.start();
    }
    rows.push(
      row(
        "plain",
        await measured(
          peers,
          media.map((m) => m.port),
          false,
        ),
      ),
    );
    await Promise.all(media.map((m) => m.close()));
  }

  say(`relay, relayed: ${calls} bridged calls (two sessions each) for ${seconds} s...`);
  {
    const peers = await startPeers(calls, seconds);
    const legs = await Promise.all(peers.callers.map(async () => [await open(), await open()] as const));
    for (const [c, [a, b]] of legs.entries()) {
      await a.configure(target(peers.callers[c]!));
      await b.configure(target(peers.humans[c]!));
      a.start();
      b.start();
      a.relay(b);
    }
    rows.push(
      row(
        "relayed",
        await measured(
          peers,
          legs.map(([a]) => a.port),
          true,
        ),
      ),
    );
    await Promise.all(legs.flat().map((m) => m.close()));
  }
  await thread.stop();

  say(`relay, rtpengine: ${calls} calls through rtpengine (userspace) for ${seconds} s...`);
  {
    const peers = await startPeers(calls, seconds);
    const rtpengine = await startRtpengine(pinning.sut, 52_000 + 4 * calls + 200, 56_000, 56_000 + 4 * calls + 100);
    try {
      const to: number[] = [];
      for (const [c, caller] of peers.callers.entries())
        to.push(await rtpengine.relay(`bench-${c}`, caller, peers.humans[c]!));
      const relay = {
        cpu: () => cpuSeconds(rtpengine.pid),
        watched: { label: "rtpengine", side: "sut", pids: () => [rtpengine.pid] } satisfies Watched,
      };
      rows.push(row("rtpengine", await measured(peers, to, true, relay)));
    } finally {
      await rtpengine.stop();
    }
  }
  return rows;
}
