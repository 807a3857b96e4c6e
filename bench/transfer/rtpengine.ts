// bench/transfer's reference relay: rtpengine (Debian's rtpengine-daemon), userspace forwarding only
// (--table=-1: no kernel module), driven over its ng control protocol (UDP, a cookie and a bencoded
// dictionary each way). Each call is an offer with the caller's SDP and an answer with the human's;
// the caller then sends to the port of the answer's rewritten SDP and rtpengine forwards to the human.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { onCpus } from "../lib/pinning";

type Bencode = string | number | Bencode[] | { [key: string]: Bencode };

export function bencode(value: Bencode): string {
  if (typeof value === "number") return `i${Math.trunc(value)}e`;
  if (typeof value === "string") return `${Buffer.byteLength(value)}:${value}`;
  if (Array.isArray(value)) return `l${value.map(bencode).join("")}e`;
  return `d${Object.keys(value)
    .sort()
    .map((k) => bencode(k) + bencode(value[k]!))
    .join("")}e`;
}

export function bdecode(text: Buffer): Bencode {
  let at = 0;
  const next = (): Bencode => {
    const c = String.fromCharCode(text[at]!);
    if (c === "i") {
      const end = text.indexOf("e", at);
      const n = Number(text.subarray(at + 1, end).toString());
      at = end + 1;
      return n;
    }
    if (c === "l" || c === "d") {
      at++;
      const items: Bencode[] = [];
      while (text[at] !== 0x65) items.push(next());
      at++;
      if (c === "l") return items;
      const dict: Record<string, Bencode> = {};
      for (let i = 0; i < items.length; i += 2) dict[items[i] as string] = items[i + 1]!;
      return dict;
    }
    const colon = text.indexOf(":", at);
    const length = Number(text.subarray(at, colon).toString());
    at = colon + 1 + length;
    return text.subarray(colon + 1, at).toString();
  };
  return next();
}

const sdpFor = (port: number, session: string) =>
  [
    "v=0",
    `o=- ${session} 1 IN IP4 127.0.0.1`,
    "s=-",
    "c=IN IP4 127.0.0.1",
    "t=0 0",
    `m=audio ${port} RTP/AVP 0`,
    "a=rtpmap:0 PCMU/8000",
    "a=ptime:20",
    "a=sendrecv",
    "",
  ].join("\r\n");

const portOf = (sdp: string) => Number(/^m=audio (\d+)/m.exec(sdp)![1]);

/** rtpengine on `cpus`, its ng port on loopback, RTP ports from `portMin`; resolves once it answers a ping. */
export async function startRtpengine(cpus: string, ngPort: number, portMin: number, portMax: number) {
  const [program, ...args] = onCpus(cpus, [
    "rtpengine",
    "--config-file=none",
    "--foreground",
    "--log-stderr",
    "--log-level=3",
    "--table=-1",
    "--interface=127.0.0.1",
    `--listen-ng=127.0.0.1:${ngPort}`,
    `--port-min=${portMin}`,
    `--port-max=${portMax}`,
  ]);
  const proc: ChildProcess = spawn(program!, args, { stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const waiting = new Map<string, (reply: Record<string, Bencode>) => void>();
  const socket = await Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: {
      data(_s, data) {
        const space = data.indexOf(0x20);
        const cookie = data.subarray(0, space).toString();
        waiting.get(cookie)?.(bdecode(data.subarray(space + 1)) as Record<string, Bencode>);
        waiting.delete(cookie);
      },
      error() {},
    },
  });
  /** One ng command; its reply (an error reply throws). */
  const command = (message: Record<string, Bencode>, timeoutMs = 2000) =>
    new Promise<Record<string, Bencode>>((resolve, reject) => {
      const cookie = randomBytes(6).toString("hex");
      const timer = setTimeout(() => {
        waiting.delete(cookie);
        reject(new Error(`rtpengine: no answer to ${message.command}`));
      }, timeoutMs);
      waiting.set(cookie, (reply) => {
        clearTimeout(timer);
        if (reply.result === "error") reject(new Error(`rtpengine: ${reply["error-reason"]}`));
        else resolve(reply);
      });
      socket.send(`${cookie} ${bencode(message)}`, ngPort, "127.0.0.1");
    });
  for (let i = 0; ; i++) {
    try {
      await command({ command: "ping" }, 200);
      break;
    } catch (error) {
      if (i === 50 || proc.exitCode !== null) throw error;
    }
  }
  return {
    pid: proc.pid!,
    /** Sets up a call from `callerPort` to `humanPort`; the port the caller sends to. */
    async relay(callId: string, callerPort: number, humanPort: number): Promise<number> {
      await command({ command: "offer", "call-id": callId, "from-tag": "caller", sdp: sdpFor(callerPort, "1") });
      const answer = await command({
        command: "answer",
        "call-id": callId,
        "from-tag": "caller",
        "to-tag": "human",
        sdp: sdpFor(humanPort, "2"),
      });
      return portOf(answer.sdp as string);
    },
    /** Ends rtpengine and with it every call it relays. */
    async stop() {
      socket.close();
      proc.kill("SIGTERM");
      await exited;
    },
  };
}
