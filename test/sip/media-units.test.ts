// The pure parts of SIP media: RTP headers, reordering, RFC 4733 digits, SDP offer/answer, and who
// called whom (privacy included).
import { expect, test } from "bun:test";
import { codecByName } from "../../src/media/codecs";
import { DtmfDecoder } from "../../src/media/dtmf";
import { JitterBuffer } from "../../src/media/jitter-buffer";
import { buildRtp, parseRtp } from "../../src/media/rtp-packet";
import { callerIdentity } from "../../src/sip/caller-identity";
import { buildAnswer, negotiate, parseSdp } from "../../src/sip/sdp";
import { StreamFramer } from "../../src/sip/sip-message";

const packet = (sequence: number, ssrc = 7) =>
  parseRtp(
    buildRtp(
      { payloadType: 0, marker: false, sequence, timestamp: sequence * 160, ssrc },
      new Uint8Array([sequence & 0xff]),
    ),
  )!;

test("RTP round trip; padding, CSRCs and non-RTP are handled", () => {
  const p = parseRtp(
    buildRtp(
      { payloadType: 8, marker: true, sequence: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef },
      new Uint8Array(160).fill(0xd5),
    ),
  )!;
  expect(p).toMatchObject({ payloadType: 8, marker: true, sequence: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef });
  expect(p.payload.length).toBe(160);
  const padded = new Uint8Array([0xa1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 1, 2, 3, 4, 0, 0, 3]); // P=1, one CSRC, 3 bytes padding
  expect(Array.from(parseRtp(padded)!.payload)).toEqual([1, 2, 3, 4]);
  expect(parseRtp(new Uint8Array([1, 2, 3]))).toBeNull();
  expect(parseRtp(Buffer.from("INVITE sip:x SIP/2.0"))).toBeNull();
});

test("the jitter buffer reorders, drops late and duplicate packets, skips a lost one, follows a new SSRC", () => {
  const jb = new JitterBuffer(3);
  const out = (seqs: number[], ssrc = 7) => {
    const ready: number[] = [];
    for (const s of seqs) jb.push(packet(s, ssrc), (p) => ready.push(p.sequence));
    return ready;
  };
  expect(out([65534, 65535, 1, 0])).toEqual([65534, 65535, 0, 1]); // wrap-around, reordered
  expect(out([1, 0])).toEqual([]); // duplicate and late
  expect(out([3, 4, 5])).toEqual([]); // 2 is missing: held
  expect(out([6])).toEqual([3, 4, 5, 6]); // gave up on 2
  expect(jb.lost).toBe(1);
  expect(out([100], 8)).toEqual([100]);
});

test("RFC 4733: one digit per event, reported at its end, repeats ignored", () => {
  const dtmf = new DtmfDecoder();
  const event = (e: number, end: boolean) => new Uint8Array([e, end ? 0x80 : 0, 0, 160]);
  expect(dtmf.decode(event(5, false), 1000)).toBeNull();
  expect(dtmf.decode(event(5, true), 1000)).toBe("5");
  expect(dtmf.decode(event(5, true), 1000)).toBeNull();
  expect(dtmf.decode(event(11, true), 2000)).toBe("#");
});

test("SDP: the caller's first G.711 codec, telephone-event, hold directions", () => {
  const offer = (extra: string, media = "m=audio 4000 RTP/AVP 18 8 0 101") =>
    parseSdp(
      [
        "v=0",
        "o=- 1 1 IN IP4 10.0.0.1",
        "s=-",
        "c=IN IP4 10.0.0.1",
        "t=0 0",
        media,
        "a=rtpmap:18 G729/8000",
        "a=rtpmap:101 telephone-event/8000",
        extra,
      ].join("\r\n"),
    )!;
  const n = negotiate(offer("a=sendrecv"))!;
  expect(n).toMatchObject({
    address: "10.0.0.1",
    port: 4000,
    dtmfPayloadType: 101,
    receiving: true,
    sending: true,
    direction: "sendrecv",
  });
  expect(n.codec.name).toBe("PCMA");
  const answer = buildAnswer({ sessionId: "9", version: 1, host: "127.0.0.1", port: 20000 }, n);
  expect(answer).toContain("m=audio 20000 RTP/AVP 8 101\r\n");
  expect(answer).toContain("a=rtpmap:8 PCMA/8000");
  expect(negotiate(offer("a=sendonly"))).toMatchObject({ receiving: true, sending: false, direction: "recvonly" });
  expect(negotiate(offer("a=inactive"))).toMatchObject({ receiving: false, sending: false, direction: "inactive" });
  expect(negotiate(offer("", "m=audio 4000 RTP/AVP 18"))).toBeNull();
  expect(codecByName("pcmu")?.payloadType).toBe(0);
});

test("caller identity: called from the Request-URI or To, calling from PAI or From, withheld is anonymous", () => {
  const base = {
    requestUser: null,
    to: "<sip:+15550001@trunk>",
    from: '"Bob" <sip:+15557777@trunk>;tag=1',
    assertedIdentity: null,
    privacy: null,
  };
  expect(callerIdentity(base)).toEqual({ calledNumber: "+15550001", callingNumber: "+15557777" });
  expect(callerIdentity({ ...base, requestUser: "15550002;npdi", assertedIdentity: "<tel:+15558888>" })).toEqual({
    calledNumber: "15550002",
    callingNumber: "+15558888",
  });
  for (const withheld of [
    { privacy: "id" },
    { privacy: "user; critical" },
    { from: "<sip:anonymous@trunk>;tag=1" },
    { from: "<sip:+1555@anonymous.invalid>" },
  ]) {
    expect(callerIdentity({ ...base, assertedIdentity: "<sip:+15559999@trunk>", ...withheld }).callingNumber).toBe(
      "anonymous",
    );
  }
});

test("TCP framing by Content-Length, across chunks, past keep-alives; oversized headers refused", () => {
  const framer = new StreamFramer();
  const msg = "OPTIONS sip:a SIP/2.0\r\nContent-Length: 4\r\n\r\nbody";
  expect(framer.push(Buffer.from(`\r\n\r\n${msg.slice(0, 20)}`))).toEqual([]);
  expect(framer.push(Buffer.from(msg.slice(20) + msg))).toEqual([msg, msg]);
  expect(() => framer.push(Buffer.alloc(70_000, 65))).toThrow();
});
