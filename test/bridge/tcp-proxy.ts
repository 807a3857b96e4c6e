// A TCP proxy the test controls, between a process and Postgres: `cut()` drops every connection and
// refuses new ones (a database failover as the client sees it), `restore()` lets them through again.
import { createConnection, createServer, type Socket } from "node:net";

export type TcpProxy = { port: number; cut(): void; restore(): void; close(): Promise<void> };

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const live = new Set<Socket>();
  let down = false;
  const server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = createConnection(target);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      live.add(a);
      a.on("error", () => b.destroy());
      a.on("close", () => {
        live.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  });
  const dropAll = () => {
    for (const socket of live) socket.destroy();
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      down = true;
      dropAll();
    },
    restore() {
      down = false;
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
