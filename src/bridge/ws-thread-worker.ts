// The websocket thread (see ws-thread.ts): the bridge's websocket server itself, so agent frames leave
// paced by this thread's own ticker whatever the bridge's event loop is doing. Requests go to that
// loop to be answered (or upgraded); what callers send goes back batched, one message per batch window.
import type { Server, ServerWebSocket } from "bun";
import { createFrameTicker } from "../calls/frame-ticker";
import { FrameClock } from "../media/frame-clock";
import { nameThisThread, raiseThreadPriority } from "../lib/thread-priority";
import { forEachInBatch, WsBatchQueue, type WsBatch } from "./ws-batch";

export type WsThreadInit = {
  t: "init";
  port: number;
  hostname: string;
  reusePort: boolean;
  idleTimeout: number;
  /** how long callers' messages are gathered before they are posted (default batchWindowMs; tests lengthen it) */
  receiveWindowMs?: number;
};

export type ToWsThread =
  | WsThreadInit
  /** the bridge's answer to request `id`: a response, or an upgrade to connection `conn` */
  | { t: "response"; id: number; status: number; headers: [string, string][]; body: string }
  | { t: "upgrade"; id: number; conn: number }
  /** sent at once (notices, interrupts) */
  | { t: "send"; conn: number; data: string | Uint8Array }
  /** agent frames, paced one every 20 ms per connection */
  | { t: "frames"; batch: WsBatch }
  /** barge-in: the frames not sent yet are dropped */
  | { t: "clear"; conn: number }
  /** a pause: the frames not sent yet wait (until resume, or a clear drops them) */
  | { t: "pause" | "resume"; conn: number }
  /** `on`: what the caller sends goes to the calls' loop at once, not at the batch window's end */
  | { t: "expedite"; conn: number; on: boolean }
  | { t: "close"; conn: number; code: number; reason: string }
  | { t: "stop" };

export type FromWsThread =
  | { t: "listening"; port: number }
  | { t: "request"; id: number; method: string; url: string; headers: [string, string][]; ip: string | null }
  | { t: "open" | "closed"; conn: number }
  /** what callers sent in one batch window */
  | { t: "messages"; batch: WsBatch }
  | { t: "pacing"; delays: Float64Array }
  | { t: "stopped" };

type Data = { conn: number };
type Pending = { resolve: (answer: Response | number) => void };

declare const self: Worker;
nameThisThread("vas-ws");
// above the calls' event loop where allowed (docs/bridge.md#websocket-thread); else as it is
raiseThreadPriority();
const post = (message: FromWsThread) => self.postMessage(message);

type Frame = string | Uint8Array;

class Connection {
  // frames handed over and not sent: queue[head..]; a sent slot is let go at once, as a long reply's
  // frames would otherwise stay on this heap until it ends (a megabyte per 30 s of 16 kHz speech)
  private queue: (Frame | undefined)[] = [];
  private head = 0;
  // after a stall of this thread, frames go on from now rather than in a burst (none is dropped)
  private readonly clock = new FrameClock();
  private pacing = false;
  private paused = false;
  /** the caller's turn may be ending: each message it sends is posted at once */
  expedited = false;
  constructor(readonly ws: ServerWebSocket<Data>) {}

  push(frame: Frame) {
    this.queue.push(frame);
    this.pace();
  }

  pause() {
    this.paused = true;
    this.stopPacing();
  }

  resume() {
    this.paused = false;
    if (this.head < this.queue.length) this.pace();
  }

  private pace() {
    if (this.pacing || this.paused) return;
    this.pacing = true;
    // never earlier than a frame after the last one: an underrun must not squeeze two frames together
    const now = ticker.now();
    this.clock.resume(now);
    ticker.add(this.tick);
    this.tick(now); // a frame due now (a reply's first) goes at once, not at the next tick
  }

  clear() {
    this.queue = [];
    this.head = 0;
    this.paused = false;
  }

  /** What is left goes before the close: the agent's last words were handed over before its hang-up. */
  close(code: number, reason: string) {
    while (this.head < this.queue.length) this.sendNext();
    this.stop();
    this.ws.close(code, reason);
  }

  stop() {
    this.clear();
    this.stopPacing();
  }

  private stopPacing() {
    if (this.pacing) ticker.remove(this.tick);
    this.pacing = false;
  }

  private sendNext() {
    this.ws.send(this.queue[this.head]!);
    this.queue[this.head++] = undefined;
    if (this.head >= 64 && this.head * 2 >= this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  private readonly tick = (now: number) => {
    this.clock.skipStall(now);
    for (; this.head < this.queue.length && this.clock.due(now); this.clock.advance()) this.sendNext();
    if (this.head < this.queue.length) return;
    this.clear();
    ticker.remove(this.tick);
    this.pacing = false;
  };
}

const connections = new Map<number, Connection>();
const pending = new Map<number, Pending>();
let nextRequest = 0;
let server: Server<Data> | null = null;
let delays: number[] = [];
const ticker = createFrameTicker(2, (ms) => delays.push(ms));

// callers' messages of the current batch window (set by init)
let received: WsBatchQueue;

function start(init: WsThreadInit) {
  received = new WsBatchQueue(
    (batch) => self.postMessage({ t: "messages", batch } satisfies FromWsThread, [batch.bytes.buffer]),
    init.receiveWindowMs,
  );
  server = Bun.serve<Data>({
    port: init.port,
    hostname: init.hostname,
    reusePort: init.reusePort,
    async fetch(req, srv) {
      const id = ++nextRequest;
      const answer = new Promise<Response | number>((resolve) => pending.set(id, { resolve }));
      const headers = [...req.headers.entries()];
      post({ t: "request", id, method: req.method, url: req.url, headers, ip: srv.requestIP(req)?.address ?? null });
      const answered = await answer;
      if (typeof answered !== "number") return answered;
      if (srv.upgrade(req, { data: { conn: answered } })) return undefined;
      post({ t: "closed", conn: answered }); // it never opened
      return Response.json({ error: { message: "this endpoint takes a websocket upgrade" } }, { status: 426 });
    },
    websocket: {
      idleTimeout: init.idleTimeout,
      open(ws) {
        connections.set(ws.data.conn, new Connection(ws));
        post({ t: "open", conn: ws.data.conn });
      },
      message(ws, message) {
        received.add(ws.data.conn, message, connections.get(ws.data.conn)?.expedited);
      },
      close(ws) {
        connections.get(ws.data.conn)?.stop();
        connections.delete(ws.data.conn);
        post({ t: "closed", conn: ws.data.conn });
      },
    },
  });
  post({ t: "listening", port: server.port! });
}

self.onmessage = ({ data: message }: MessageEvent<ToWsThread>) => {
  switch (message.t) {
    case "init":
      return start(message);
    case "response": {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      waiter?.resolve(new Response(message.body, { status: message.status, headers: message.headers }));
      return;
    }
    case "upgrade": {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      waiter?.resolve(message.conn);
      return;
    }
    case "send":
      connections.get(message.conn)?.ws.send(message.data);
      return;
    case "frames":
      forEachInBatch(message.batch, (conn, frame) => connections.get(conn)?.push(frame));
      return;
    case "clear":
      connections.get(message.conn)?.clear();
      return;
    case "pause":
      connections.get(message.conn)?.pause();
      return;
    case "resume":
      connections.get(message.conn)?.resume();
      return;
    case "expedite": {
      const connection = connections.get(message.conn);
      if (connection) connection.expedited = message.on;
      return;
    }
    case "close":
      connections.get(message.conn)?.close(message.code, message.reason);
      return;
    case "stop":
      void Promise.resolve(server?.stop(true)).then(() => post({ t: "stopped" }));
      return;
  }
};

// the pacer's delays for the bridge's metrics
setInterval(() => {
  if (delays.length === 0) return;
  post({ t: "pacing", delays: Float64Array.from(delays) });
  delays = [];
}, 500);
