// One call's RTCP on its RTP port + 1: a sender report about what we sent (with a report block about
// the caller's stream) about every 5 s, and the caller's reports read for what it saw of ours: the
// jitter, the packets lost and the round-trip time (RFC 3550 §6.4.1, A.3, A.8). Sent where the
// caller's RTCP comes from, else to its RTP address with port + 1 (RFC 3550 §11); either only when the
// outbound guard allows the address (so never to the hold address 0.0.0.0, which is this machine).
// Reports are due on the process's coarse ticker (one timer for every call), not a timer per call.
import type { udp } from "bun";
import type { AddressRefusal } from "../net/outbound-guard";
import { coarseTicker } from "../calls/frame-ticker";
import { buildRtcp, ntpMiddle, ntpNow, parseRtcp, type ReportBlock } from "./rtcp";
import { readU32, type RtpPacket } from "./rtp-packet";

/** What the caller reported about the audio we sent it. */
export type CallerQuality = {
  /** the highest interarrival jitter it reported */
  jitterMs: number;
  /** packets it lost, as of its last report */
  packetsLost: number;
  /** the last round-trip time measured (its report on our SR); null without one */
  rttMs: number | null;
  reports: number;
};

export type RtcpOptions = {
  clockRate: number;
  intervalMs: number;
  /** where our RTP goes (the caller's latched or signalled address); RTCP goes to port + 1 */
  rtpDestination: () => { address: string; port: number } | null;
  /** our measure of the caller's interarrival jitter */
  receivedJitterMs: () => number;
  /** the outbound guard's check of an address we would send to */
  refusalOf: AddressRefusal;
};

type Received = {
  ssrc: number;
  base: number;
  max: number;
  cycles: number;
  count: number;
  expectedPrior: number;
  countPrior: number;
};

export class RtcpReporter {
  private nextReportAt = 0;
  private ssrc: number | null = null;
  private packetsSent = 0;
  private octetsSent = 0;
  private lastTimestamp = 0;
  private lastSentAt = 0;
  private received: Received | null = null;
  private lastSenderReport: { middle: number; at: number } | null = null;
  private peer: { address: string; port: number } | null = null;
  private readonly cname = `vas-${crypto.randomUUID()}`;
  private caller: CallerQuality | null = null;

  private constructor(
    private readonly socket: udp.Socket<"buffer">,
    private readonly options: RtcpOptions,
  ) {}

  /** Binds `port` (the RTP port + 1); null when it is taken (the call then goes without RTCP). */
  static async open(hostname: string, port: number, options: RtcpOptions): Promise<RtcpReporter | null> {
    let reporter: RtcpReporter | null = null;
    try {
      const socket = await Bun.udpSocket({
        hostname,
        port,
        socket: { data: (_s, data, rport, raddr) => reporter?.receive(data, rport, raddr), error: () => {} },
      });
      reporter = new RtcpReporter(socket, options);
    } catch {
      return null;
    }
    // the first report early (RFC 3550 §6.2: half the interval), so short calls get one too
    reporter.schedule(options.intervalMs / 2);
    return reporter;
  }

  get quality(): CallerQuality | null {
    return this.caller && { ...this.caller };
  }

  /** An RTP packet we sent (header as built by rtp-packet.ts). */
  sent(packet: Uint8Array) {
    this.lastTimestamp = readU32(packet, 4);
    this.ssrc = readU32(packet, 8);
    this.lastSentAt = performance.now();
    this.packetsSent++;
    this.octetsSent += packet.length - 12;
  }

  /** A packet of the caller's audio stream (RFC 3550 A.1: sequence numbers extended over wraps). */
  receivedRtp(packet: RtpPacket) {
    const r = this.received;
    if (!r || r.ssrc !== packet.ssrc) {
      this.received = {
        ssrc: packet.ssrc,
        base: packet.sequence,
        max: packet.sequence,
        cycles: 0,
        count: 1,
        expectedPrior: 0,
        countPrior: 0,
      };
      return;
    }
    r.count++;
    const delta = (packet.sequence - r.max) & 0xffff;
    if (delta > 0 && delta < 0x8000) {
      if (packet.sequence < r.max) r.cycles += 0x10000;
      r.max = packet.sequence;
    }
  }

  close() {
    coarseTicker.remove(this.tick);
    this.socket.close();
  }

  private schedule(delayMs: number) {
    this.nextReportAt = performance.now() + delayMs;
    coarseTicker.add(this.tick);
  }

  private readonly tick = (now: number) => {
    if (now < this.nextReportAt) return;
    this.report();
    // randomized (0.5 to 1.5 times the interval) so calls started together do not report together
    this.nextReportAt = now + this.options.intervalMs * (0.5 + Math.random());
  };

  private report() {
    const to = this.peer ?? this.destination();
    const ssrc = this.ssrc ?? this.received?.ssrc;
    if (!to || ssrc === undefined) return; // nothing sent or heard yet
    const blocks = this.received ? [this.blockAboutCaller(this.received)] : [];
    const sender =
      this.ssrc === null
        ? undefined
        : {
            ntp: ntpNow(),
            // our RTP clock now: the last packet's timestamp moved on by the time since it was sent
            rtpTimestamp:
              (this.lastTimestamp +
                Math.round(((performance.now() - this.lastSentAt) * this.options.clockRate) / 1000)) >>>
              0,
            packetCount: this.packetsSent,
            octetCount: this.octetsSent,
          };
    try {
      this.socket.send(buildRtcp({ ssrc: this.ssrc ?? 0, cname: this.cname, sender, blocks }), to.port, to.address);
    } catch {
      // the caller's side is gone: the RTP time-out ends the call
    }
  }

  private destination() {
    const rtp = this.options.rtpDestination();
    if (!rtp || this.options.refusalOf(rtp.address)) return null;
    return { address: rtp.address, port: rtp.port + 1 };
  }

  private blockAboutCaller(r: Received): ReportBlock {
    const extendedMax = r.cycles + r.max;
    const expected = extendedMax - r.base + 1;
    const expectedInterval = expected - r.expectedPrior;
    const lostInterval = expectedInterval - (r.count - r.countPrior);
    r.expectedPrior = expected;
    r.countPrior = r.count;
    const sr = this.lastSenderReport;
    return {
      ssrc: r.ssrc,
      fractionLost:
        expectedInterval <= 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval * 256) / expectedInterval),
      cumulativeLost: expected - r.count,
      extendedHighestSequence: extendedMax,
      jitter: (this.options.receivedJitterMs() * this.options.clockRate) / 1000,
      lastSenderReport: sr?.middle ?? 0,
      delaySinceLastSenderReport: sr ? Math.round(((performance.now() - sr.at) / 1000) * 65536) : 0,
    };
  }

  private receive(data: Buffer, port: number, address: string) {
    const known = this.peer?.address === address;
    if (!known && this.options.refusalOf(address)) return; // we would answer it: not our caller's
    const reports = parseRtcp(data);
    if (reports.length === 0) return;
    // symmetric RTCP: answer where the caller's reports come from (NAT)
    this.peer = { address, port };
    const arrival = ntpMiddle(ntpNow());
    for (const report of reports) {
      if (report.sender) this.lastSenderReport = { middle: report.sender.ntpMiddle, at: performance.now() };
      for (const block of report.blocks) if (block.ssrc === this.ssrc) this.heard(block, arrival);
    }
  }

  private heard(block: ReportBlock, arrival: number) {
    this.caller ??= { jitterMs: 0, packetsLost: 0, rttMs: null, reports: 0 };
    const caller = this.caller;
    caller.reports++;
    caller.jitterMs = Math.max(caller.jitterMs, (block.jitter * 1000) / this.options.clockRate);
    caller.packetsLost = block.cumulativeLost;
    if (block.lastSenderReport !== 0) {
      // in 1/65536 s; a negative result (clock skew, a bogus report) is no measurement
      const rtt = (arrival - block.lastSenderReport - block.delaySinceLastSenderReport) | 0;
      if (rtt >= 0) caller.rttMs = Math.round((rtt / 65536) * 1000 * 10) / 10;
    }
  }
}
