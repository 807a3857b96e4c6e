// The media side of every bench call on one UDP socket: each call's SDP points here, the bridge
// sends to it (from the call's own RTP port, which names the call) and latches onto our answer.
// Per call it measures the bridge's packets (inter-arrival jitter against 20 ms; loss: sequence gaps,
// or timestamp jumps past them, which is how frames the bridge skipped after a stall show) and
// sends 20 ms PCMU frames back in real time: a question now and then, silence otherwise.
import { muLawEncode } from "../../src/audio/g711";
import { buildRtp, parseRtp, sequenceDelta } from "../../src/media/rtp-packet";

type Call = { port: number; lastAt: number; lastSeq: number; lastTs: number; received: number; lost: number; sent: number; started: number; seq: number };

export type MediaStats = { calls: number; packets: number; jitters: number[]; lost: number; clientLag: number[] };

export async function startRtpCallers(question: Int16Array) {
  const frames: Uint8Array[] = [];
  const gap = 250; // frames of silence between questions (5 s)
  for (let i = 0; i < question.length; i += 160) frames.push(muLawEncode(question.subarray(i, i + 160)).slice());
  const silence = muLawEncode(new Int16Array(160)).slice();
  const calls = new Map<number, Call>();
  let stats: MediaStats = { calls: 0, packets: 0, jitters: [], lost: 0, clientLag: [] };

  const socket = await Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: {
      error() {}, // port unreachable after a bridge session closed
      data(_s, data, port) {
        const packet = parseRtp(data);
        if (!packet) return;
        const now = performance.now();
        let call = calls.get(port);
        if (!call) {
          call = { port, lastAt: now, lastSeq: packet.sequence, lastTs: packet.timestamp, received: 0, lost: 0, sent: 0, started: now, seq: (Math.random() * 0xffff) | 0 };
          calls.set(port, call);
          stats.calls++;
        } else {
          const step = sequenceDelta(call.lastSeq, packet.sequence);
          if (step <= 0) return; // late or duplicate
          // 20 ms frames the timestamp moved on by: more than the sequence step means frames skipped
          const frames = Math.max(step, Math.round(((packet.timestamp - call.lastTs) >>> 0) / 160));
          stats.lost += frames - 1;
          stats.jitters.push(Math.abs(now - call.lastAt - 20 * frames));
          call.lastSeq = packet.sequence;
          call.lastTs = packet.timestamp;
          call.lastAt = now;
        }
        call.received++;
        stats.packets++;
      },
    },
  });

  let lastLoop = performance.now();
  const loop = setInterval(() => {
    const now = performance.now();
    stats.clientLag.push(Math.max(0, now - lastLoop - 5)); // our own lateness, part of what we measure
    lastLoop = now;
    for (const call of calls.values()) {
      if (now - call.lastAt > 2000) continue; // hung up
      while (call.sent * 20 <= now - call.started) {
        const i = call.sent % (frames.length + gap);
        const packet = buildRtp({ payloadType: 0, marker: false, sequence: call.seq++ & 0xffff, timestamp: call.sent * 160, ssrc: call.port }, frames[i] ?? silence);
        call.sent++;
        try {
          socket.send(packet, call.port, "127.0.0.1");
        } catch {
          // Bun reports an ICMP port-unreachable (a call that ended) on a later send, to any port
        }
      }
    }
  }, 5);

  return {
    port: socket.port,
    get live() {
      return calls.size;
    },
    /** The stats so far; `reset` starts a new step (calls that ended are forgotten). */
    take(reset = false): MediaStats {
      const taken = stats;
      if (reset) {
        calls.clear();
        stats = { calls: 0, packets: 0, jitters: [], lost: 0, clientLag: [] };
      }
      return taken;
    },
    stop() {
      clearInterval(loop);
      socket.close();
    },
  };
}
