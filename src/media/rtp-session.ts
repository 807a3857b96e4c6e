// One call's RTP: a socket on a port of the pool, symmetric latching (we send where the caller's
// first valid packet came from, not only where its SDP said, unless the outbound guard refuses that
// address: docs/security.md), reordering, RFC 4733 digits, the paced
// sender, and a time-out when the caller's media stops. Timers are the thread's: the shared ticker
// paces the sender, the coarse one watches every call's time-out. It runs in the bridge's event loop
// (openInProcess) or on its media thread (media-thread-worker.ts).
import { coarseTicker, sharedTicker, type FrameTicker } from "../calls/frame-ticker";
import {
  deliverPayload,
  type CallMedia,
  type MediaHandlers,
  type MediaOptions,
  type MediaStats,
  type MediaTarget,
  type OpenMedia,
} from "./call-media";
import { createOutboundGuard, type AddressRefusal } from "../net/outbound-guard";
import type { Codec } from "./codecs";
import { DtmfDecoder } from "./dtmf";
import { InterarrivalJitter } from "./interarrival-jitter";
import { JitterBuffer } from "./jitter-buffer";
import type { PortPool, RtpSocket } from "./port-pool";
import { parseRtp, type RtpPacket } from "./rtp-packet";
import { RtcpReporter } from "./rtcp-reporter";
import { RtpSender } from "./rtp-sender";

export type RtpHandlers = Omit<MediaHandlers, "onAudio"> & {
  /** A frame of caller audio as it came, in the order sent; the payload is valid during the call only. */
  onPayload(payload: Uint8Array, codec: Codec): void;
};

/** Calls' RTP in this event loop; `allowCidrs`: OUTBOUND_ALLOW_CIDRS, for the addresses we latch to. */
export const openInProcess = (pool: PortPool, allowCidrs: string[]): OpenMedia => {
  const { refusalOf } = createOutboundGuard({ allowCidrs });
  return (handlers, options) =>
    RtpSession.open(
      pool,
      { ...handlers, onPayload: (payload, codec) => deliverPayload(handlers, payload, codec) },
      { ...options, refusalOf },
    );
};

export type RtpSessionOptions = MediaOptions & {
  clock?: FrameTicker;
  /** the outbound guard's check: a source it refuses is never latched to (we would send it our RTP) */
  refusalOf: AddressRefusal;
};

export class RtpSession implements CallMedia {
  readonly leadMs = 0;
  private socket!: RtpSocket;
  private target: MediaTarget | null = null;
  private latched: { address: string; port: number } | null = null;
  private readonly jitter = new JitterBuffer();
  private readonly dtmf = new DtmfDecoder();
  private arrivals: InterarrivalJitter | null = null;
  private sender: RtpSender | null = null;
  private lastPacketAt = performance.now();
  private closed = false;
  private started = false;
  private rtcp: RtcpReporter | null = null;
  /** the other leg of a bridged transfer: our caller's packets go on to it */
  private peer: RtpSession | null = null;
  packetsReceived = 0;

  private constructor(
    private readonly pool: PortPool,
    private readonly handlers: RtpHandlers,
    private readonly timeoutMs: number,
    private readonly clock: FrameTicker,
    private readonly refusalOf: AddressRefusal,
  ) {}

  static async open(pool: PortPool, handlers: RtpHandlers, options: RtpSessionOptions) {
    const session = new RtpSession(pool, handlers, options.timeoutMs, options.clock ?? sharedTicker, options.refusalOf);
    session.socket = await pool.bind((data, port, address) => session.receive(data, port, address));
    session.rtcp = await RtcpReporter.open(session.socket.hostname, session.socket.port + 1, {
      clockRate: 8000, // G.711, the codecs we negotiate
      intervalMs: options.rtcpIntervalMs ?? 5_000,
      rtpDestination: () => session.latched ?? session.target,
      receivedJitterMs: () => session.arrivals?.ms ?? 0,
      refusalOf: options.refusalOf,
    });
    return session;
  }

  get port() {
    return this.socket.port;
  }

  /** Applies a negotiated offer/answer; a new address unlatches, so a moved caller is followed. */
  configure(target: MediaTarget) {
    if (this.target && (this.target.address !== target.address || this.target.port !== target.port))
      this.latched = null;
    this.target = target;
    this.sender?.setCodec(target.codec);
    this.lastPacketAt = performance.now();
    if (this.started) this.startSending();
  }

  /**
   * Starts sending and watching for silence from the caller (after the answer went out). After a late
   * offer (an INVITE without SDP) the caller's answer comes with the ACK, later: sending starts then.
   */
  start() {
    this.started = true;
    this.startSending();
  }

  private startSending() {
    if (this.sender || this.closed || !this.target) return;
    this.sender = new RtpSender(this.target.codec, (packet) => this.sendPacket(packet), this.clock);
    this.sender.start();
    this.lastPacketAt = performance.now();
    coarseTicker.add(this.checkTimeout);
  }

  /** The 20 ms frame at `from` in `pcm` (the media thread's batches hold many). */
  playAudio(pcm: Int16Array, from = 0) {
    this.sender?.push(pcm, from);
  }

  clearAudio() {
    this.sender?.flush();
  }

  pauseAudio() {
    this.sender?.hold(true);
  }

  resumeAudio() {
    this.sender?.hold(false);
  }

  relay(peer: CallMedia) {
    if (!(peer instanceof RtpSession)) throw new Error("a relay joins two RTP sessions of one event loop");
    this.peer = peer;
    peer.peer = this;
  }

  /**
   * A packet of the other leg, sent on at once: its payload as it came when both legs talk one codec,
   * else decoded and encoded again (G.711 to G.711: one byte a sample either way); an RFC 4733 event
   * under our side's telephone-event type (dropped when our side negotiated none).
   */
  private forward(packet: RtpPacket, from: Codec | null) {
    const target = this.target;
    const sender = this.sender;
    if (!target || !sender || this.closed) return;
    if (!from) {
      if (target.dtmfPayloadType !== null) sender.relay(packet, target.dtmfPayloadType, packet.payload);
    } else if (from.name === target.codec.name) sender.relay(packet, target.codec.payloadType, packet.payload);
    else {
      const pcm = from.decode(packet.payload);
      const payload = new Uint8Array(pcm.length);
      target.codec.encodeInto(pcm, payload, 0, 0, pcm.length);
      sender.relay(packet, target.codec.payloadType, payload);
    }
  }

  async close(): Promise<MediaStats> {
    if (!this.closed) {
      this.closed = true;
      this.peer = null;
      this.sender?.stop();
      coarseTicker.remove(this.checkTimeout);
      this.rtcp?.close();
      this.pool.release(this.socket);
    }
    return this.stats;
  }

  /** What the caller's RTCP reports said of our audio (null: it sent none). */
  get callerQuality() {
    return this.rtcp?.quality ?? null;
  }

  get stats(): MediaStats {
    return {
      sent: this.sender?.packetsSent ?? 0,
      skipped: this.sender?.framesSkipped ?? 0,
      received: this.packetsReceived,
      lost: this.jitter.lost,
      jitterMs: this.arrivals?.ms ?? 0,
    };
  }

  private sendPacket(packet: Uint8Array) {
    const target = this.target;
    if (!target?.sending || this.closed) return;
    const to = this.latched ?? target;
    try {
      this.socket.send(packet, to.port, to.address);
      this.rtcp?.sent(packet);
    } catch {
      // ICMP port unreachable from the last send (the caller's side is gone): the time-out ends the call
    }
  }

  private receive(data: Buffer, port: number, address: string) {
    const target = this.target;
    const packet = target && parseRtp(data);
    if (!packet) return; // not RTP, or before we know what to expect
    const isAudio = packet.payloadType === target.codec.payloadType;
    if (!isAudio && packet.payloadType !== target.dtmfPayloadType) return;
    if (!this.latched) {
      if (this.refusalOf(address)) return; // not our caller: a destination we may not send to
      this.latched = { address, port };
    } else if (this.latched.address !== address || this.latched.port !== port) return; // not our caller
    this.packetsReceived++;
    this.lastPacketAt = performance.now();
    // relayed on arrival, before our reordering: the other side's jitter buffer does that once
    this.peer?.forward(packet, isAudio ? target.codec : null);
    if (!isAudio) {
      const digit = this.dtmf.decode(packet.payload, packet.timestamp);
      if (digit) this.handlers.onDigit(digit);
      return;
    }
    this.arrivals ??= new InterarrivalJitter(target.codec.clockRate);
    this.arrivals.add(packet.timestamp, this.lastPacketAt);
    this.rtcp?.receivedRtp(packet);
    this.jitter.push(packet, this.play);
  }

  private readonly play = (packet: RtpPacket) => {
    const codec = this.target?.codec;
    if (!codec) return;
    this.handlers.onPayload(packet.payload, codec);
  };

  private readonly checkTimeout = (now: number) => {
    if (this.closed || !this.target?.receiving) return;
    if (now - this.lastPacketAt > this.timeoutMs) this.handlers.onTimeout();
  };
}
