// The media thread (see media-thread.ts): the RTP sessions of a bridge process, paced by this thread's
// own ticker. Caller audio goes back as one message per run of that ticker; the pacer's delays,
// and the callers' RTCP figures when they change, every half second.
import { createFrameTicker } from "../calls/frame-ticker";
import { noStats, type MediaStats, type MediaTarget } from "./call-media";
import { nameThisThread } from "../lib/thread-priority";
import { createOutboundGuard, type AddressRefusal } from "../net/outbound-guard";
import { codecByName, frameSamples, type Codec } from "./codecs";
import type { CallerQuality } from "./rtcp-reporter";
import { PortPool, PortsExhausted } from "./port-pool";
import { RtpSession } from "./rtp-session";

/** A MediaTarget as it crosses threads: the codec by name. */
export type WireTarget = Omit<MediaTarget, "codec"> & { codec: Codec["name"] };

export type ToMediaThread =
  | { t: "init"; portMin: number; portMax: number; hostname: string; allowCidrs: string[] }
  | { t: "open"; id: number; timeoutMs: number; rtcpIntervalMs?: number }
  | { t: "configure"; id: number; target: WireTarget }
  | { t: "start" | "clear" | "pause" | "resume" | "close"; id: number }
  /** a bridged transfer: the two sessions' packets go to each other */
  | { t: "relay"; id: number; peer: number }
  /** agent frames of 160 samples, frame i for session ids[i] */
  | { t: "frames"; ids: Int32Array; pcm: Int16Array };

export type FromMediaThread =
  | { t: "opened"; id: number; port: number }
  | { t: "configured"; id: number }
  /** exhausted: no free RTP port (the caller is told to try again, not that we failed) */
  | { t: "failed"; id: number; error: string; exhausted: boolean }
  /** caller payloads: payload i for session ids[i], in codec payloadTypes[i], bytes[ends[i-1]..ends[i]] */
  | { t: "audio"; ids: Int32Array; payloadTypes: Uint8Array; ends: Uint32Array; bytes: Uint8Array }
  | { t: "digit"; id: number; digit: string }
  | { t: "timeout"; id: number }
  | { t: "quality"; id: number; quality: CallerQuality }
  | { t: "closed"; id: number; stats: MediaStats }
  | { t: "pacing"; delays: Float64Array };

declare const self: Worker;
nameThisThread("vas-media");
const post = (message: FromMediaThread) => self.postMessage(message);

let pool: PortPool | null = null;
let refusalOf: AddressRefusal = () => "the media thread was not initialised";
const sessions = new Map<number, { rtp: RtpSession; reports: number }>();
let delays: number[] = [];
const clock = createFrameTicker(2, (ms) => delays.push(ms));

// caller payloads since the last run of the ticker
let ids: number[] = [];
let payloadTypes: number[] = [];
let payloads: Uint8Array[] = [];
let flushing = false;

// at the thread's next tick (2 ms at most): datagrams come one by one, and one message per datagram
// would cost more than the media itself
function sendAudio() {
  flushing = false;
  clock.remove(sendAudio);
  const ends = new Uint32Array(payloads.length);
  let total = 0;
  for (let i = 0; i < payloads.length; i++) {
    total += payloads[i]!.length;
    ends[i] = total;
  }
  const bytes = new Uint8Array(total);
  for (let i = 0; i < payloads.length; i++) bytes.set(payloads[i]!, ends[i]! - payloads[i]!.length);
  post({ t: "audio", ids: Int32Array.from(ids), payloadTypes: Uint8Array.from(payloadTypes), ends, bytes });
  ids = [];
  payloadTypes = [];
  payloads = [];
}

async function open(id: number, timeoutMs: number, rtcpIntervalMs: number | undefined) {
  if (!pool) throw new Error("the media thread was not initialised");
  const rtp = await RtpSession.open(
    pool,
    {
      onPayload(payload, codec) {
        ids.push(id);
        payloadTypes.push(codec.payloadType);
        payloads.push(payload); // a view into the datagram, copied at the ticker's next run
        if (!flushing) {
          flushing = true;
          clock.add(sendAudio);
        }
      },
      onDigit: (digit) => post({ t: "digit", id, digit }),
      onTimeout: () => post({ t: "timeout", id }),
    },
    { timeoutMs, rtcpIntervalMs, clock, refusalOf },
  );
  sessions.set(id, { rtp, reports: 0 });
  return rtp.port;
}

self.onmessage = ({ data: message }: MessageEvent<ToMediaThread>) => {
  switch (message.t) {
    case "init":
      pool = new PortPool(message.portMin, message.portMax, message.hostname);
      refusalOf = createOutboundGuard({ allowCidrs: message.allowCidrs }).refusalOf;
      return;
    case "open":
      open(message.id, message.timeoutMs, message.rtcpIntervalMs).then(
        (port) => post({ t: "opened", id: message.id, port }),
        (error: Error) =>
          post({ t: "failed", id: message.id, error: error.message, exhausted: error instanceof PortsExhausted }),
      );
      return;
    case "frames":
      for (let i = 0; i < message.ids.length; i++)
        sessions.get(message.ids[i]!)?.rtp.playAudio(message.pcm, i * frameSamples);
      return;
    case "configure": {
      const codec = codecByName(message.target.codec);
      if (codec) sessions.get(message.id)?.rtp.configure({ ...message.target, codec });
      post({ t: "configured", id: message.id });
      return;
    }
    case "start":
      sessions.get(message.id)?.rtp.start();
      return;
    case "clear":
      sessions.get(message.id)?.rtp.clearAudio();
      return;
    case "pause":
      sessions.get(message.id)?.rtp.pauseAudio();
      return;
    case "resume":
      sessions.get(message.id)?.rtp.resumeAudio();
      return;
    case "relay": {
      const peer = sessions.get(message.peer)?.rtp;
      if (peer) sessions.get(message.id)?.rtp.relay(peer);
      return;
    }
    case "close": {
      const stats = sessions.get(message.id)?.rtp.close() ?? Promise.resolve(noStats);
      sessions.delete(message.id);
      void stats.then((s) => post({ t: "closed", id: message.id, stats: s }));
      return;
    }
  }
};

// the pacer's delays for the bridge's metrics, and what callers' RTCP reported since the last time
setInterval(() => {
  if (delays.length > 0) {
    post({ t: "pacing", delays: Float64Array.from(delays) });
    delays = [];
  }
  for (const [id, session] of sessions) {
    const quality = session.rtp.callerQuality;
    if (quality && quality.reports !== session.reports) {
      session.reports = quality.reports;
      post({ t: "quality", id, quality });
    }
  }
}, 500);
