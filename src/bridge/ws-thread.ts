// The bridge's websocket server on a thread of its own (ws-thread-worker.ts), as SIP's RTP runs on the
// media thread: the calls stay in this event loop, but the sockets and the pacing of agent frames live
// on the thread, so provider websockets, call start-ups, database round trips and this heap's
// collections do not delay a frame the caller is due to hear. The call's playout hands frames over
// `leadMs` ahead; the thread sends one per connection every 20 ms. Requests are answered here (the
// thread forwards them), and what callers send comes back batched.
import { log } from "../log";
import { recordPacingDelay } from "../metrics/metrics";
import { FramesHeld } from "./frames-held";
import { forEachInBatch, WsBatchQueue } from "./ws-batch";
import type { FromWsThread, ToWsThread, WsThreadInit } from "./ws-thread-worker";
import type { WireSocket } from "./wire-socket";

/** What a request handler may do besides answering: upgrade (as Bun's server does), and the peer's address. */
export type UpgradeTarget<D> = {
  upgrade(req: Request, options: { data: D }): boolean;
  requestIP(req: Request): { address: string } | null;
};

export type HostedSockets<D> = {
  fetch(req: Request, server: UpgradeTarget<D>): Promise<Response | undefined> | Response | undefined;
  open(data: D, socket: WireSocket): void;
  message(data: D, message: string | Buffer): void;
  close(data: D): void;
};

export type WsThreadOptions = Omit<WsThreadInit, "t"> & { leadMs: number };

export type WsThread = { port: number; stop(): Promise<void> };

export async function startWsThread<D>(options: WsThreadOptions, sockets: HostedSockets<D>): Promise<WsThread> {
  const conns = new Map<number, { data: D; opened: boolean }>();
  let nextConn = 0;
  let worker: Worker;
  let stopped = false;
  let whenStopped: (() => void) | null = null;

  // agent frames of every connection, gathered for a batch window: one message
  const frames = new WsBatchQueue((batch) =>
    worker.postMessage({ t: "frames", batch } satisfies ToWsThread, [batch.bytes.buffer]),
  );
  // anything else goes after the frames before it (an interrupt after the frames it interrupts)
  const post = (message: ToWsThread) => {
    frames.flush();
    worker.postMessage(message);
  };

  const socketOf = (conn: number): WireSocket => {
    const held = new FramesHeld();
    return {
      sendText: (text) => post({ t: "send", conn, data: text }),
      sendBinary: (bytes) => post({ t: "send", conn, data: bytes }),
      close: (code, reason) => post({ t: "close", conn, code, reason }),
      frameLeadMs: options.leadMs,
      // (a copy: the playout reuses its frame buffer); a reply's first frame waits for no batch window
      sendFrame: (frame) => frames.add(conn, frame, held.handOver(performance.now())),
      clearFrames: () => {
        held.cleared();
        post({ t: "clear", conn });
      },
      pauseFrames: () => post({ t: "pause", conn }),
      resumeFrames: () => post({ t: "resume", conn }),
      expediteReceived: (on) => post({ t: "expedite", conn, on }),
    };
  };

  async function answer(id: number, method: string, url: string, headers: [string, string][], ip: string | null) {
    let upgraded: number | null = null;
    const target: UpgradeTarget<D> = {
      upgrade(_req, { data }) {
        upgraded = ++nextConn;
        conns.set(upgraded, { data, opened: false });
        return true;
      },
      requestIP: () => (ip ? { address: ip } : null),
    };
    const response = await sockets.fetch(new Request(url, { method, headers }), target);
    if (upgraded !== null) return post({ t: "upgrade", id, conn: upgraded });
    const res = response ?? new Response(null, { status: 500 });
    post({ t: "response", id, status: res.status, headers: [...res.headers.entries()], body: await res.text() });
  }

  const receive = (message: FromWsThread) => {
    switch (message.t) {
      case "request": {
        const { id, method, url, headers, ip } = message;
        answer(id, method, url, headers, ip).catch((error: Error) => {
          log.error("bridge request failed", { url, error: error.message });
          post({ t: "response", id, status: 500, headers: [], body: "" });
        });
        return;
      }
      case "open": {
        const entry = conns.get(message.conn);
        if (!entry) return;
        entry.opened = true;
        sockets.open(entry.data, socketOf(message.conn));
        return;
      }
      case "messages":
        forEachInBatch(message.batch, (conn, data) => {
          const entry = conns.get(conn);
          if (entry?.opened)
            sockets.message(
              entry.data,
              typeof data === "string" ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength),
            );
        });
        return;
      case "closed": {
        const entry = conns.get(message.conn);
        conns.delete(message.conn);
        if (entry?.opened) sockets.close(entry.data);
        return;
      }
      case "pacing":
        for (const ms of message.delays) recordPacingDelay(ms, "ws");
        return;
      case "listening":
        return; // (awaited by start)
      case "stopped":
        whenStopped?.();
        return;
    }
  };

  const start = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const started = new Worker(new URL("./ws-thread-worker.ts", import.meta.url));
      started.onmessage = ({ data }: MessageEvent<FromWsThread>) => {
        if (data.t === "listening") resolve(data.port);
        else receive(data);
      };
      started.onerror = (event) => {
        reject(new Error(event.message));
        started.terminate();
        if (stopped) return;
        // its sockets died with it: those calls end as if their callers had hung up; new calls get a new thread
        log.error("websocket thread failed", { error: event.message, connections: conns.size });
        for (const [conn, entry] of conns) {
          conns.delete(conn);
          if (entry.opened) sockets.close(entry.data);
        }
        void start(port).catch((error: Error) => log.error("websocket thread not restarted", { error: error.message }));
      };
      worker = started;
      const { hostname, reusePort, idleTimeout, receiveWindowMs } = options;
      started.postMessage({ t: "init", port, hostname, reusePort, idleTimeout, receiveWindowMs } satisfies ToWsThread);
    });

  const port = await start(options.port);
  return {
    port,
    async stop() {
      stopped = true;
      // the thread closes its sockets and their close events come back before it goes
      await new Promise<void>((resolve) => {
        whenStopped = resolve;
        post({ t: "stop" });
      });
      worker.terminate();
    },
  };
}
