// A TCP proxy the test controls, between a process and Postgres. `cut()` drops every connection and
// refuses new ones (a database failover as the client sees it); `blackhole()` keeps every connection
// and accepts new ones but passes nothing on, in either direction, ever again on those connections
// (a network partition: no reset, no refusal, only silence); `restore()` lets new connections through.
import { createConnection, createServer, type Socket } from "node:net";

export type TcpProxy = {
  port: number;
  cut(): void;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
};

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const live = new Set<Socket>();
  /** connections that were open during a black hole: silent for good, as a client that gave up would find them */
  const silenced = new Set<Socket>();
  let mode: "open" | "refuse" | "blackhole" = "open";
  const server = createServer((client) => {
    if (mode === "refuse") return void client.destroy();
    live.add(client);
    client.on("close", () => {
      live.delete(client);
      silenced.delete(client);
    });
    client.on("error", () => {});
    if (mode === "blackhole") {
      silenced.add(client);
      return;
    }
    const upstream = createConnection(target);
    live.add(upstream);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on("error", () => b.destroy());
      a.on("close", () => {
        live.delete(a);
        silenced.delete(a);
        b.destroy();
      });
      a.on("data", (chunk) => {
        if (!silenced.has(a)) b.write(chunk);
      });
    }
  });
  const dropAll = () => {
    for (const socket of live) socket.destroy();
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      mode = "refuse";
      dropAll();
    },
    blackhole() {
      mode = "blackhole";
      for (const socket of live) silenced.add(socket);
    },
    restore() {
      mode = "open";
    },
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy) {
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(proxy.port);
  return u.toString();
}
