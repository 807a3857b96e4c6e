// RTCP wire format (RFC 3550 §6.4): sender and receiver reports with their report blocks, and the
// SDES CNAME every compound packet carries; parsed defensively (anything malformed ends the parse).
export const rtcpSenderReport = 200;
export const rtcpReceiverReport = 201;
const rtcpSdes = 202;
const ntpEpochOffsetSec = 2_208_988_800;

/** What one side says about the stream of `ssrc` it receives (RFC 3550 §6.4.1). */
export type ReportBlock = {
  ssrc: number;
  /** lost since the previous report, in 1/256 */
  fractionLost: number;
  cumulativeLost: number;
  extendedHighestSequence: number;
  /** interarrival jitter, in RTP timestamp units */
  jitter: number;
  /** middle 32 bits of the NTP time of the last SR received from `ssrc` (0: none) */
  lastSenderReport: number;
  /** delay since that SR, in 1/65536 s */
  delaySinceLastSenderReport: number;
};

export type SenderInfo = { ntpMiddle: number; rtpTimestamp: number; packetCount: number; octetCount: number };

export type RtcpReport = {
  type: typeof rtcpSenderReport | typeof rtcpReceiverReport;
  ssrc: number;
  sender: SenderInfo | null;
  blocks: ReportBlock[];
};

/** Wall-clock time as NTP seconds and fraction. */
export function ntpNow(nowMs = Date.now()): { seconds: number; fraction: number } {
  const seconds = Math.floor(nowMs / 1000) + ntpEpochOffsetSec;
  return { seconds: seconds >>> 0, fraction: Math.floor(((nowMs % 1000) / 1000) * 2 ** 32) >>> 0 };
}

/** The middle 32 bits of an NTP timestamp (the unit of LSR and round-trip times: 1/65536 s). */
export function ntpMiddle(ntp: { seconds: number; fraction: number }): number {
  return (((ntp.seconds & 0xffff) << 16) | (ntp.fraction >>> 16)) >>> 0;
}

/**
 * A compound packet: an SR (when `sender` is given) or an RR from `ssrc` with `blocks`, then an SDES
 * with our CNAME.
 */
export function buildRtcp(report: {
  ssrc: number;
  cname: string;
  sender?: {
    ntp: { seconds: number; fraction: number };
    rtpTimestamp: number;
    packetCount: number;
    octetCount: number;
  };
  blocks: ReportBlock[];
}): Uint8Array {
  const reportBytes = 8 + (report.sender ? 20 : 0) + 24 * report.blocks.length;
  const cname = new TextEncoder().encode(report.cname.slice(0, 255));
  // SSRC, CNAME item (type, length, text), then at least one zero octet ending the item list, to 32 bits
  const sdesBytes = 4 + Math.ceil((4 + 2 + cname.length + 1) / 4) * 4;
  const out = new Uint8Array(reportBytes + sdesBytes);
  const view = new DataView(out.buffer);
  view.setUint8(0, 0x80 | report.blocks.length);
  view.setUint8(1, report.sender ? rtcpSenderReport : rtcpReceiverReport);
  view.setUint16(2, reportBytes / 4 - 1);
  view.setUint32(4, report.ssrc >>> 0);
  let at = 8;
  if (report.sender) {
    view.setUint32(at, report.sender.ntp.seconds);
    view.setUint32(at + 4, report.sender.ntp.fraction);
    view.setUint32(at + 8, report.sender.rtpTimestamp >>> 0);
    view.setUint32(at + 12, report.sender.packetCount >>> 0);
    view.setUint32(at + 16, report.sender.octetCount >>> 0);
    at += 20;
  }
  for (const block of report.blocks) {
    view.setUint32(at, block.ssrc >>> 0);
    // cumulative lost is a signed 24-bit number (duplicates can make it negative)
    const lost = Math.max(-0x800000, Math.min(0x7fffff, block.cumulativeLost)) & 0xffffff;
    view.setUint32(at + 4, ((block.fractionLost & 0xff) << 24) | lost);
    view.setUint32(at + 8, block.extendedHighestSequence >>> 0);
    view.setUint32(at + 12, Math.round(block.jitter) >>> 0);
    view.setUint32(at + 16, block.lastSenderReport >>> 0);
    view.setUint32(at + 20, block.delaySinceLastSenderReport >>> 0);
    at += 24;
  }
  view.setUint8(at, 0x81);
  view.setUint8(at + 1, rtcpSdes);
  view.setUint16(at + 2, sdesBytes / 4 - 1);
  view.setUint32(at + 4, report.ssrc >>> 0);
  view.setUint8(at + 8, 1); // CNAME
  view.setUint8(at + 9, cname.length);
  out.set(cname, at + 10);
  return out;
}

/** The SRs and RRs of a compound packet (other packet types are skipped); [] when it is not RTCP. */
export function parseRtcp(data: Uint8Array): RtcpReport[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const reports: RtcpReport[] = [];
  let at = 0;
  while (at + 4 <= data.length) {
    const first = view.getUint8(at);
    const type = view.getUint8(at + 1);
    const end = at + (view.getUint16(at + 2) + 1) * 4;
    if (first >> 6 !== 2 || end > data.length) break;
    if ((type === rtcpSenderReport || type === rtcpReceiverReport) && end >= at + 8) {
      const count = first & 0x1f;
      let block = at + 8 + (type === rtcpSenderReport ? 20 : 0);
      if (block + count * 24 > end) break;
      const sender =
        type === rtcpSenderReport
          ? {
              ntpMiddle: ntpMiddle({ seconds: view.getUint32(at + 8), fraction: view.getUint32(at + 12) }),
              rtpTimestamp: view.getUint32(at + 16),
              packetCount: view.getUint32(at + 20),
              octetCount: view.getUint32(at + 24),
            }
          : null;
      const blocks: ReportBlock[] = [];
      for (let i = 0; i < count; i++, block += 24) {
        const lost = view.getUint32(block + 4) & 0xffffff;
        blocks.push({
          ssrc: view.getUint32(block),
          fractionLost: view.getUint8(block + 4),
          cumulativeLost: lost & 0x800000 ? lost - 0x1000000 : lost,
          extendedHighestSequence: view.getUint32(block + 8),
          jitter: view.getUint32(block + 12),
          lastSenderReport: view.getUint32(block + 16),
          delaySinceLastSenderReport: view.getUint32(block + 20),
        });
      }
      reports.push({ type, ssrc: view.getUint32(at + 4), sender, blocks });
    }
    at = end;
  }
  return reports;
}
