// The relay of a bridged transfer on real sockets, in the event loop and on the media thread: two RTP
// sessions joined, a peer on each. A packet from one peer reaches the other with its payload as sent
// (one codec) or re-encoded (PCMU to PCMA), its RFC 4733 events under the other side's payload type,
// on the session's own SSRC with the sequence numbers going on where our paced packets left off;
// the audio still reaches the handlers (for the recording).
import { afterAll, afterEach, expect, test } from "bun:test";
import { aLawEncode, muLawDecode, muLawEncode } from "../../src/audio/g711";
import type { MediaTarget } from "../../src/media/call-media";
import { codecByName } from "../../src/media/codecs";
import { buildRtp, parseRtp, type RtpPacket } from "../../src/media/rtp-packet";
import { mediaOpeners, pcmuCaller } from "../helpers/media-openers";
import { until } from "./helpers/eventually";

const openers = mediaOpeners(48_000);
afterAll(() => Promise.all(openers.map((o) => o.stop())));
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const pcmaPeer = (port: number, dtmfPayloadType: number | null): MediaTarget => ({
  ...pcmuCaller(port, dtmfPayloadType),
  codec: codecByName("PCMA")!,
});

async function peer() {
  const received: RtpPacket[] = [];
  const socket = await Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: {
      data: (_s, data) => {
        const packet = parseRtp(new Uint8Array(data));
        if (packet) received.push({ ...packet, payload: packet.payload.slice() });
      },
      error() {},
    },
  });
  cleanup.push(() => socket.close());
  return { socket, received };
}

const ramp = (from: number) => Int16Array.from({ length: 160 }, (_, i) => (from + i) * 40 - 20_000);

for (const { where, open } of openers)
  test(`relay ${where}: PCMU in, PCMA out re-encoded and back; digits under each side's type; one stream per side`, async () => {
    const a = await peer();
    const b = await peer();
    const heardA: Int16Array[] = [];
    const legA = await open(
      { onAudio: (pcm) => heardA.push(pcm), onDigit: () => {}, onTimeout: () => {} },
      { timeoutMs: 10_000, rtcpIntervalMs: 60_000 },
    );
    const legB = await open(
      { onAudio: () => {}, onDigit: () => {}, onTimeout: () => {} },
      { timeoutMs: 10_000, rtcpIntervalMs: 60_000 },
    );
    cleanup.push(
      () => legA.close(),
      () => legB.close(),
    );
    await legA.configure(pcmuCaller(a.socket.port, 101));
    await legB.configure(pcmaPeer(b.socket.port, 96));
    legA.start();
    legB.start();
    // our paced silence reaches both before the relay
    await until("paced packets at both peers", () => a.received.length > 2 && b.received.length > 2);
    legA.relay(legB);
    // the relay is joined on the thread after this message: a packet from B first proves it is
    const sendB = (seq: number, payload: Uint8Array, pt = 8) =>
      b.socket.send(
        buildRtp({ payloadType: pt, marker: false, sequence: seq, timestamp: 9000 + seq * 160, ssrc: 2 }, payload),
        legB.port,
        "127.0.0.1",
      );
    await until("B's packets relayed to A", () => {
      sendB(100, aLawEncode(ramp(0)));
      return a.received.some((p) => p.payloadType === 0 && p.payload.some((x) => x !== 0xff));
    });
    const bBefore = b.received.length;
    for (let i = 0; i < 5; i++)
      a.socket.send(
        buildRtp(
          { payloadType: 0, marker: i === 0, sequence: 700 + i, timestamp: 50_000 + i * 160, ssrc: 1 },
          muLawEncode(ramp(i * 160)),
        ),
        legA.port,
        "127.0.0.1",
      );
    // a key press from A: start and end packets of one event
    for (const flags of [0x0a, 0x8a])
      a.socket.send(
        buildRtp(
          { payloadType: 101, marker: false, sequence: 705 + (flags >> 7), timestamp: 50_800, ssrc: 1 },
          new Uint8Array([5, flags, 0, 160]),
        ),
        legA.port,
        "127.0.0.1",
      );
    await until("A's audio and digit at B", () => b.received.filter((p) => p.payloadType === 96).length >= 2);
    const relayed = b.received.slice(bBefore);
    // (a paced silent packet may still have gone out just before the first relayed one)
    const audio = relayed.filter((p) => p.payloadType === 8 && !p.payload.every((x) => x === 0xd5));
    expect(audio).toHaveLength(5);
    // PCMU decoded and encoded again as PCMA: what A said, in B's codec
    for (const [i, p] of audio.entries())
      expect([...p.payload]).toEqual([...aLawEncode(muLawDecode(muLawEncode(ramp(i * 160))))]);
    const events = relayed.filter((p) => p.payloadType === 96);
    expect([...events[1]!.payload]).toEqual([5, 0x8a, 0, 160]);
    // one stream: B's SSRC throughout, sequence numbers on from our last paced packet, timestamps in
    // step, and no paced packet after the first relayed one
    expect(new Set(b.received.map((p) => p.ssrc)).size).toBe(1);
    const first = b.received.indexOf(audio[0]!);
    expect(audio[0]!.sequence).toBe((b.received[first - 1]!.sequence + 1) & 0xffff);
    expect(audio[0]!.marker).toBe(true);
    expect(audio.map((p) => (p.timestamp - audio[0]!.timestamp) >>> 0)).toEqual([0, 160, 320, 480, 640]);
    expect(
      b.received.slice(first).filter((p) => p.payloadType === 8 && p.payload.every((x) => x === 0xd5)),
    ).toHaveLength(0);
    // the caller's audio still reaches its handlers (the recording)
    expect(heardA.length).toBeGreaterThanOrEqual(5);
  });

for (const { where, open } of openers)
  test(`relay ${where}: one codec on both legs passes the payload bytes as they came`, async () => {
    const a = await peer();
    const b = await peer();
    const legA = await open({ onAudio: () => {}, onDigit: () => {}, onTimeout: () => {} }, { timeoutMs: 10_000 });
    const legB = await open({ onAudio: () => {}, onDigit: () => {}, onTimeout: () => {} }, { timeoutMs: 10_000 });
    cleanup.push(
      () => legA.close(),
      () => legB.close(),
    );
    await legA.configure(pcmuCaller(a.socket.port, 101));
    await legB.configure(pcmuCaller(b.socket.port, null));
    legA.start();
    legB.start();
    await until("paced packets at both peers", () => a.received.length > 0 && b.received.length > 0);
    legB.relay(legA);
    // every byte value, not only what mu-law encoding of some samples yields
    const bytes = Uint8Array.from({ length: 160 }, (_, i) => (i * 37 + 11) & 0xff);
    let seq = 0;
    await until("A's bytes at B", () => {
      a.socket.send(
        buildRtp({ payloadType: 0, marker: false, sequence: seq++, timestamp: seq * 160, ssrc: 1 }, bytes),
        legA.port,
        "127.0.0.1",
      );
      return b.received.some((p) => p.payload.length === 160 && p.payload[0] === bytes[0] && p.payload[1] === bytes[1]);
    });
    const match = b.received.find((p) => p.payload[0] === bytes[0] && p.payload[1] === bytes[1])!;
    expect([...match.payload]).toEqual([...bytes]);
    // a digit from A: B negotiated no telephone-event, so it is not sent there
    a.socket.send(
      buildRtp(
        { payloadType: 101, marker: false, sequence: seq++, timestamp: 99, ssrc: 1 },
        new Uint8Array([1, 0x8a, 0, 160]),
      ),
      legA.port,
      "127.0.0.1",
    );
    await until("a later audio packet at B", () => {
      a.socket.send(
        buildRtp({ payloadType: 0, marker: false, sequence: seq++, timestamp: seq * 160, ssrc: 1 }, bytes),
        legA.port,
        "127.0.0.1",
      );
      return b.received.filter((p) => p.payload[0] === bytes[0]).length >= 3;
    });
    expect(b.received.every((p) => p.payloadType === 0)).toBe(true);
  });
