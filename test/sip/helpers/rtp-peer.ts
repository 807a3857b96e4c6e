// The caller's media in SIP tests: a real UDP socket that the SIPp caller's SDP points at. It waits
// for the bridge's first packet (the bridge sends to the SDP address until it latches), then streams
// G.711 back every 20 ms: queued speech, or silence; digits as RFC 4733 events.
import { aLawDecode, aLawEncode, muLawDecode, muLawEncode } from "../../../src/audio/g711";
import { buildRtp, parseRtp } from "../../../src/media/rtp-packet";

export type Law = "PCMU" | "PCMA";
export type Received = { payloadType: number; sequence: number; timestamp: number; at: number; payload: Uint8Array };

/** `host`: the loopback address it listens on (the SDP's c= address). */
export async function startRtpPeer(law: Law = "PCMU", host = "127.0.0.1") {
  const pt = law === "PCMU" ? 0 : 8;
  const encode = law === "PCMU" ? muLawEncode : aLawEncode;
  const decode = law === "PCMU" ? muLawDecode : aLawDecode;
  const received: Received[] = [];
  let bridge: { port: number; address: string } | null = null;
  const socket = await Bun.udpSocket({
    hostname: host,
    socket: {
      error() {}, // port unreachable before the bridge listens or after it hung up
      data(_s, data, port, address) {
        const packet = parseRtp(data);
        if (!packet) return;
        bridge ??= { port, address };
        received.push({
          payloadType: packet.payloadType,
          sequence: packet.sequence,
          timestamp: packet.timestamp,
          at: performance.now(),
          payload: packet.payload.slice(),
        });
      },
    },
  });
  const queue: Uint8Array[] = [];
  let seq = 1000;
  let ts = 5000;
  let sending = true;
  const ssrc = 0x1234abcd;
  const send = (payloadType: number, payload: Uint8Array, marker = false) => {
    if (!bridge) return;
    socket.send(
      buildRtp({ payloadType, marker, sequence: seq++ & 0xffff, timestamp: ts, ssrc }, payload),
      bridge.port,
      bridge.address,
    );
  };
  const timer = setInterval(() => {
    if (!sending || !bridge) return;
    send(pt, queue.shift() ?? encode(new Int16Array(160)));
    ts += 160;
  }, 20);

  return {
    port: socket.port,
    received,
    get latched() {
      return bridge !== null;
    },
    /** Queues 8 kHz speech, sent in 20 ms frames. */
    say(pcm: Int16Array) {
      for (let i = 0; i < pcm.length; i += 160) {
        const frame = new Int16Array(160);
        frame.set(pcm.subarray(i, i + 160));
        queue.push(encode(frame));
      }
    },
    /** Seconds of speech still queued. */
    get pending() {
      return queue.length * 0.02;
    },
    /** One key press: three packets of the event, the end packet three times (RFC 4733). */
    dtmf(digit: string, eventPt = 101) {
      const event = "0123456789*#".indexOf(digit);
      const stamp = ts;
      for (let i = 0; i < 6; i++) {
        const end = i >= 3;
        const duration = (i + 1) * 160;
        send(eventPt, new Uint8Array([event, (end ? 0x80 : 0) | 10, duration >> 8, duration & 0xff]), i === 0);
      }
      ts = stamp + 960;
    },
    /** Stops sending (RTP time-out tests). */
    silence() {
      sending = false;
    },
    /** What the bridge sent, decoded (audio packets of the negotiated type only). */
    heard(): Int16Array {
      const audio = received.filter((r) => r.payloadType === pt);
      const out = new Int16Array(audio.length * 160);
      for (const [i, r] of audio.entries()) out.set(decode(r.payload).subarray(0, 160), i * 160);
      return out;
    },
    stop() {
      clearInterval(timer);
      socket.close();
    },
  };
}

export type RtpPeer = Awaited<ReturnType<typeof startRtpPeer>>;
