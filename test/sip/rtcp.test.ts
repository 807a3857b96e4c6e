// RTCP (RFC 3550): the wire format, and one call's RTP session on real sockets sending sender reports
// to the caller's RTP port + 1 and reading the caller's receiver reports into what the caller saw.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import {
  buildRtcp,
  ntpMiddle,
  ntpNow,
  parseRtcp,
  rtcpReceiverReport,
  rtcpSenderReport,
  type RtcpReport,
} from "../../src/media/rtcp";
import { buildRtp, parseRtp } from "../../src/media/rtp-packet";
import { mediaOpeners, pcmuCaller } from "../helpers/media-openers";
import { until } from "./helpers/eventually";

const openers = mediaOpeners(42_000);
afterAll(() => Promise.all(openers.map((o) => o.stop())));

const block = {
  ssrc: 0x01020304,
  fractionLost: 12,
  cumulativeLost: -2,
  extendedHighestSequence: 0x1fffe,
  jitter: 321,
  lastSenderReport: 0xaabbccdd,
  delaySinceLastSenderReport: 65536,
};

test("SR and RR round trip with their report blocks; the SDES after them and garbage are skipped", () => {
  const ntp = { seconds: 0xe0000001, fraction: 0x80000000 };
  const sr = buildRtcp({
    ssrc: 7,
    cname: "bridge",
    sender: { ntp, rtpTimestamp: 0xfffffff0, packetCount: 250, octetCount: 40_000 },
    blocks: [block],
  });
  expect(sr.length % 4).toBe(0);
  expect(parseRtcp(sr)).toEqual([
    {
      type: rtcpSenderReport,
      ssrc: 7,
      sender: { ntpMiddle: 0x00018000, rtpTimestamp: 0xfffffff0, packetCount: 250, octetCount: 40_000 },
      blocks: [block],
    },
  ]);
  const rr = buildRtcp({
    ssrc: 9,
    cname: "x".repeat(40),
    blocks: [block, { ...block, ssrc: 5, cumulativeLost: 70_000 }],
  });
  expect(parseRtcp(rr)).toMatchObject([
    { type: rtcpReceiverReport, ssrc: 9, sender: null, blocks: [block, { ssrc: 5, cumulativeLost: 70_000 }] },
  ]);
  expect(parseRtcp(Buffer.from("INVITE sip:x SIP/2.0"))).toEqual([]);
  expect(parseRtcp(sr.subarray(0, 20))).toEqual([]); // cut short
  expect(ntpMiddle(ntpNow(Date.UTC(2026, 0, 1)))).toBe(
    (((Date.UTC(2026, 0, 1) / 1000 + 2_208_988_800) & 0xffff) << 16) >>> 0,
  );
});

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

/** A caller's two sockets: RTP on an even port and RTCP on the next, each keeping what arrives. */
async function callerSockets() {
  for (let port = 41_000 + (process.pid % 500) * 2; ; port += 2) {
    const rtpIn: Uint8Array[] = [];
    const rtcpIn: RtcpReport[][] = [];
    try {
      const rtp = await Bun.udpSocket({
        hostname: "127.0.0.1",
        port,
        socket: { data: (_s, d) => void rtpIn.push(new Uint8Array(d)) },
      });
      const rtcp = await Bun.udpSocket({
        hostname: "127.0.0.1",
        port: port + 1,
        socket: { data: (_s, d) => void rtcpIn.push(parseRtcp(d)) },
      }).catch((e) => {
        rtp.close();
        throw e;
      });
      cleanup.push(() => {
        rtp.close();
        rtcp.close();
      });
      return { port, rtp, rtcp, rtpIn, rtcpIn };
    } catch {
      // taken: the next pair
    }
  }
}

describe.each(openers)("RTCP of a call's media $where", ({ open }) => {
  test("a call sends sender reports to the caller's RTP port + 1 and reads the jitter, loss and round trip the caller reports", async () => {
    const caller = await callerSockets();
    const session = await open(
      { onAudio: () => {}, onDigit: () => {}, onTimeout: () => {} },
      { timeoutMs: 10_000, rtcpIntervalMs: 400 },
    );
    cleanup.push(() => session.close());
    await session.configure(pcmuCaller(caller.port));
    session.start();
    // the caller's stream: ten packets, one (seq 103) never sent
    const callerSsrc = 0x0badcafe;
    for (const seq of [100, 101, 102, 104, 105, 106, 107, 108, 109, 110])
      caller.rtp.send(
        buildRtp(
          { payloadType: 0, marker: false, sequence: seq, timestamp: seq * 160, ssrc: callerSsrc },
          new Uint8Array(160).fill(0xff),
        ),
        session.port,
        "127.0.0.1",
      );

    const [sr] = await until("a sender report", () =>
      caller.rtcpIn.find((reports) => reports[0]?.type === rtcpSenderReport),
    );
    const ourSsrc = parseRtp(caller.rtpIn[0]!)!.ssrc;
    expect(sr!.ssrc).toBe(ourSsrc);
    expect(sr!.sender!.packetCount).toBeGreaterThan(0);
    expect(sr!.sender!.octetCount).toBe(sr!.sender!.packetCount * 160);
    expect(sr!.blocks).toMatchObject([{ ssrc: callerSsrc, extendedHighestSequence: 110, cumulativeLost: 1 }]);
    expect(session.callerQuality).toBeNull();

    // the caller's receiver report on our stream: 20 ms jitter (160 units at 8 kHz), 7 lost, our SR echoed
    const rr = buildRtcp({
      ssrc: callerSsrc,
      cname: "caller",
      blocks: [
        {
          ssrc: ourSsrc,
          fractionLost: 3,
          cumulativeLost: 7,
          extendedHighestSequence: 1,
          jitter: 160,
          lastSenderReport: sr!.sender!.ntpMiddle,
          delaySinceLastSenderReport: 0,
        },
      ],
    });
    caller.rtcp.send(rr, session.port + 1, "127.0.0.1");
    const quality = await until("the caller's report read", () => session.callerQuality);
    expect(quality).toMatchObject({ jitterMs: 20, packetsLost: 7, reports: 1 });
    // from our SR to its echo: the time the SR waited in the caller's socket, well under a second here
    expect(quality.rttMs).toBeGreaterThanOrEqual(0);
    expect(quality.rttMs!).toBeLessThan(1_000);

    // a report about another stream is not about what the caller heard of ours
    caller.rtcp.send(
      buildRtcp({ ssrc: callerSsrc, cname: "caller", blocks: [{ ...block, ssrc: 1234 }] }),
      session.port + 1,
      "127.0.0.1",
    );
    await Bun.sleep(700);
    expect(session.callerQuality!.reports).toBe(1);
  });
});
