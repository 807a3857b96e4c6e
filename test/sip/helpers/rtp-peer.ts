// The caller's media in SIP tests: a real UDP socket that the SIPp caller's SDP points at. It waits
// for the bridge's first packet (the bridge sends to the SDP address until it latches), then streams
// G.711 back every 20 ms: queued speech, or silence; digits as RFC 4733 events. One peer behind a SIPp
// UAS taking several calls (`everySource`) streams to every bridge port it hears from, each its own
// sequence: every call gets the callee's audio, as from a phone of its own.
import { aLawDecode, aLawEncode, muLawDecode, muLawEncode } from "../../../src/audio/g711";
import { buildRtp, parseRtp } from "../../../src/media/rtp-packet";

export type Law = "PCMU" | "PCMA";
export type Received = { payloadType: number; sequence: number; timestamp: number; at: number; payload: Uint8Array };

/** `host`: the loopback address it listens on (the SDP's c= address); `everySource`: answer every sender, not only the first. */
export async function startRtpPeer(law: Law = "PCMU", host = "127.0.0.1", everySource = false) {
  const pt = law === "PCMU" ? 0 : 8;
  const encode = law === "PCMU" ? muLawEncode : aLawEncode;
  const decode = law === "PCMU" ? muLawDecode : aLawDecode;
  const received: Received[] = [];
  // where it streams to: the first sender, or each sender (`everySource`), with the stream's next sequence
  // and when that sender was last heard
  let streams: { port: number; address: string; seq: number; heardAt: number }[] = [];
  const socket = await Bun.udpSocket({
    hostname: host,
    socket: {
      error() {}, // port unreachable before the bridge listens or after it hung up
      data(_s, data, port, address) {
        const packet = parseRtp(data);
        if (!packet) return;
        const stream = streams.find((s) => s.port === port && s.address === address);
        if (stream) stream.heardAt = performance.now();
        else if (streams.length === 0 || everySource)
          streams.push({ port, address, seq: 1000, heardAt: performance.now() });
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
  let ts = 5000;
  let sending = true;
  const ssrc = 0x1234abcd;
  const send = (payloadType: number, payload: Uint8Array, marker = false) => {
    // a call's bridge sends every 20 ms: a sender silent for a second has hung up, and its closed port
    // would refuse every packet (the socket's error then fails a send to a live call); heard again, it is
    // answered again
    if (everySource) streams = streams.filter((s) => performance.now() - s.heardAt <= 1000);
    for (const stream of streams) {
      try {
        socket.send(
          buildRtp({ payloadType, marker, sequence: stream.seq++ & 0xffff, timestamp: ts, ssrc }, payload),
          stream.port,
          stream.address,
        );
      } catch {
        // ECONNREFUSED: a port that refused an earlier packet (its call ended)
      }
    }
  };
  const timer = setInterval(() => {
    if (!sending || streams.length === 0) return;
    send(pt, queue.shift() ?? encode(new Int16Array(160)));
    ts += 160;
  }, 20);

  return {
    port: socket.port,
    received,
    get latched() {
      return streams.length > 0;
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
