// Where a call's RTP and RTCP go, on real sockets, in the event loop and on the media thread: only to
// addresses the outbound guard allows (here OUTBOUND_ALLOW_CIDRS=127.0.0.1/32; 127.0.0.3 and the hold
// address 0.0.0.0, which is this machine, are refused). The SDP's address is checked in signalling
// (rtp-destination.test.ts); these are the destinations the media picks itself.
import { afterAll, expect, test } from "bun:test";
import { muLawEncode } from "../../src/audio/g711";
import { buildRtp } from "../../src/media/rtp-packet";
import { mediaOpeners, pcmuCaller } from "../helpers/media-openers";
import { until } from "./helpers/eventually";

const openers = mediaOpeners(54_000, 60, ["127.0.0.1/32"]);
afterAll(() => Promise.all(openers.map((o) => o.stop())));

/** A UDP socket on `host` that counts what it receives. */
async function listener(host: string) {
  const got: Uint8Array[] = [];
  const socket = await Bun.udpSocket({
    hostname: host,
    socket: { data: (_s, data) => void got.push(new Uint8Array(data)), error() {} },
  });
  return { socket, got };
}

const silence = muLawEncode(new Int16Array(160));

// each test has sockets of its own and mostly waits (paced RTP, a hold's 2 s without reports): all four
// run at once (test.concurrent)
for (const { where, open } of openers) {
  test.concurrent(`${where}: RTP from a refused address is not latched to: it gets none of ours, and its audio is not the caller's`, async () => {
    const caller = await listener("127.0.0.1");
    const intruder = await listener("127.0.0.3");
    let heard = 0;
    const media = await open(
      { onAudio: () => heard++, onDigit: () => {}, onTimeout: () => {} },
      { timeoutMs: 60_000, rtcpIntervalMs: 60_000 },
    );
    await media.configure(pcmuCaller(caller.socket.port));
    media.start();
    await until("our RTP at the caller's SDP address", () => caller.got.length > 0);
    // the intruder speaks first, from an address the guard refuses
    for (let seq = 0; seq < 25; seq++) {
      const header = { payloadType: 0, marker: false, sequence: seq, timestamp: seq * 160, ssrc: 3 };
      intruder.socket.send(buildRtp(header, silence), media.port, "127.0.0.1");
      await Bun.sleep(20);
    }
    expect(heard).toBe(0);
    const before = caller.got.length;
    await until("our RTP still at the caller", () => caller.got.length > before + 10);
    // then the caller: latched to, heard
    for (let seq = 0; seq < 10; seq++) {
      const header = { payloadType: 0, marker: false, sequence: seq, timestamp: seq * 160, ssrc: 1 };
      caller.socket.send(buildRtp(header, silence), media.port, "127.0.0.1");
    }
    await until("the caller's audio", () => heard > 0);
    await media.close();
    expect(intruder.got).toHaveLength(0);
    caller.socket.close();
    intruder.socket.close();
  });

  test.concurrent(`${where}: on hold at 0.0.0.0 (this machine) no RTCP goes there`, async () => {
    const rtcp = await listener("127.0.0.1"); // the caller's RTCP port: its RTP port + 1
    const holdRtcp = await listener("127.0.0.1"); // where RTCP to 0.0.0.0 (hold's RTP port + 1) would land
    const media = await open(
      { onAudio: () => {}, onDigit: () => {}, onTimeout: () => {} },
      { timeoutMs: 60_000, rtcpIntervalMs: 200 },
    );
    await media.configure(pcmuCaller(rtcp.socket.port - 1));
    media.start();
    await until("a sender report at the caller's RTCP port", () => rtcp.got.length > 0);
    // a re-INVITE puts the call on hold the old way: c=0.0.0.0, nothing sent either way
    await media.configure({
      ...pcmuCaller(holdRtcp.socket.port - 1),
      address: "0.0.0.0",
      sending: false,
      receiving: false,
    });
    // reports are due every 100-300 ms: several would have gone by now
    await Bun.sleep(2000);
    await media.close();
    expect(holdRtcp.got).toHaveLength(0);
    rtcp.socket.close();
    holdRtcp.socket.close();
  });
}
