// The media side of the bench calls: one UDP socket per call (its SDP points there, through SIPp's
// injection file), so no shared socket buffer can hide or invent loss. Per call it measures the
// bridge's packets (inter-arrival jitter against 20 ms; loss: sequence gaps, or timestamp jumps past
// them, which is how frames the bridge skipped after a stall show) and sends 20 ms PCMU frames back
// from the same socket (the bridge latches onto it) in real time: a question now and then, silence
// otherwise. A watch measures a fixed set of calls over a window (calls already up while others start).
import type { udp } from "bun";
import { muLawEncode } from "../../src/audio/g711";
import { buildRtp, parseRtp, sequenceDelta } from "../../src/media/rtp-packet";
import { Histogram } from "../lib/histogram";

type Call = {
  socket: udp.Socket<"buffer">;
  ssrc: number;
  bridge: { port: number; address: string } | null;
  /** a packet has come from the far end (until then a call sent to by `sendTo` is not up) */
  heard: boolean;
  lastAt: number;
  lastSeq: number;
  lastTs: number;
  sent: number;
  started: number;
  seq: number;
};

// every step binds fresh ports: a bridge session of the previous step still sending must not be
// taken for a new call
let nextPort = 34_000 + (process.pid % 100) * 2;

export type MediaStats = { calls: number; packets: number; jitters: Histogram; lost: number; clientLag: Histogram };

/** One watch's figures: its calls' jitter samples and lost frames, and the bench's own timer lag, over `seconds`. */
export type WindowStats = { calls: number; seconds: number; jitters: Histogram; lost: number; clientLag: Histogram };

type Watch = { cohort: ReadonlySet<Call>; from: number; stats: WindowStats };

export type RtpCallers = Awaited<ReturnType<typeof startRtpCallers>>;

/** Binds `n` sockets on even ports (the bridge's RTCP goes to port + 1, left unbound) for one step's calls. */
export async function startRtpCallers(question: Int16Array, n: number) {
  const frames: Uint8Array[] = [];
  const gap = 250; // frames of silence between questions (5 s)
  for (let i = 0; i < question.length; i += 160) frames.push(muLawEncode(question.subarray(i, i + 160)).slice());
  const silence = muLawEncode(new Int16Array(160)).slice();
  const stats: MediaStats = { calls: 0, packets: 0, jitters: new Histogram(), lost: 0, clientLag: new Histogram() };
  const calls: Call[] = [];
  let recent = new Histogram();
  const watches = new Set<Watch>();

  function heard(call: Call, data: Buffer, port: number, address: string) {
    const packet = parseRtp(data);
    if (!packet) return;
    const now = performance.now();
    if (!call.heard) {
      call.heard = true;
      call.bridge ??= { port, address };
      call.ssrc = packet.ssrc;
      call.started ||= now;
      stats.calls++;
    } else {
      if (packet.ssrc !== call.ssrc) return; // not this call's stream
      const step = sequenceDelta(call.lastSeq, packet.sequence);
      if (step <= 0) return; // late or duplicate
      // 20 ms frames the timestamp moved on by: more than the sequence step means frames skipped
      const advanced = (packet.timestamp - call.lastTs) >>> 0;
      const framesPassed = advanced < 2 ** 31 ? Math.max(step, Math.round(advanced / 160)) : step;
      stats.lost += framesPassed - 1;
      const jitter = Math.abs(now - call.lastAt - 20 * framesPassed);
      stats.jitters.add(jitter);
      recent.add(jitter);
      for (const watch of watches) {
        if (!watch.cohort.has(call)) continue;
        watch.stats.jitters.add(jitter);
        watch.stats.lost += framesPassed - 1;
      }
    }
    call.lastSeq = packet.sequence;
    call.lastTs = packet.timestamp;
    call.lastAt = now;
    stats.packets++;
  }

  while (calls.length < n) {
    if (nextPort > 64_000) nextPort = 34_000;
    const port = nextPort;
    nextPort += 2;
    const call: Call = {
      socket: null!,
      ssrc: 0,
      bridge: null,
      heard: false,
      lastAt: 0,
      lastSeq: 0,
      lastTs: 0,
      sent: 0,
      started: 0,
      seq: (Math.random() * 0xffff) | 0,
    };
    try {
      // error: an ICMP port-unreachable after the bridge's session closed
      call.socket = await Bun.udpSocket({
        hostname: "127.0.0.1",
        port,
        socket: { data: (_s, data, rport, raddr) => heard(call, data, rport, raddr), error() {} },
      });
      calls.push(call);
    } catch {
      // taken: the next even port
    }
  }

  let lastLoop = performance.now();
  const loop = setInterval(() => {
    const now = performance.now();
    const lag = Math.max(0, now - lastLoop - 5); // our own lateness, part of what we measure
    stats.clientLag.add(lag);
    for (const watch of watches) watch.stats.clientLag.add(lag);
    lastLoop = now;
    for (const call of calls) {
      if (!call.bridge || (call.heard && now - call.lastAt > 2000)) continue; // not answered yet, or hung up
      while (call.sent * 20 <= now - call.started) {
        const i = call.sent % (frames.length + gap);
        const packet = buildRtp(
          {
            payloadType: 0,
            marker: false,
            sequence: call.seq++ & 0xffff,
            timestamp: call.sent * 160,
            ssrc: call.socket.port,
          },
          frames[i] ?? silence,
        );
        call.sent++;
        try {
          call.socket.send(packet, call.bridge.port, call.bridge.address);
        } catch {
          // the call ended
        }
      }
    }
  }, 5);

  const up = () => {
    const now = performance.now();
    return calls.filter((c) => c.bridge && now - c.lastAt < 2000);
  };

  return {
    /** The calls' RTP ports, one per call in SIPp's order. */
    ports: calls.map((c) => c.socket.port),
    /**
     * Starts every call's media towards `ports` (one per call, in order) without waiting for a packet
     * first, for a far end that only answers (the bare relay); the calls' 20 ms phases spread evenly.
     */
    sendTo(ports: number[], address = "127.0.0.1") {
      const now = performance.now();
      for (const [i, call] of calls.entries()) {
        call.bridge = { port: ports[i]!, address };
        call.started = now + (i / calls.length) * 20;
      }
    },
    /** Calls whose bridge packets are still arriving. */
    get live() {
      return up().length;
    },
    /** Measures `cohort` (by default the calls up now) from now until `close`, which returns the figures. */
    watch(cohort: ReadonlySet<Call> = new Set(up())) {
      const watch: Watch = {
        cohort,
        from: performance.now(),
        stats: { calls: cohort.size, seconds: 0, jitters: new Histogram(), lost: 0, clientLag: new Histogram() },
      };
      watches.add(watch);
      return {
        cohort,
        close(): WindowStats {
          watches.delete(watch);
          watch.stats.seconds = (performance.now() - watch.from) / 1000;
          return watch.stats;
        },
      };
    },
    /** The step's figures so far. */
    stats,
    /** The jitter samples since the last call (progress lines). */
    recent() {
      const taken = recent;
      recent = new Histogram();
      return taken;
    },
    stop() {
      clearInterval(loop);
      for (const call of calls) call.socket.close();
    },
  };
}
