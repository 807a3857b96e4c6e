// Plain HTTP listeners on chosen loopback addresses (127.0.0.1 and 127.0.0.2 on one port), recording
// what reaches them: the guard tests tell an allowed destination from a refused one by which got the request.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

export type Listener = {
  host: string;
  port: number;
  /** remotePort: the client's end of the connection (the same on a kept-alive connection reused) */
  requests: { path: string; headers: IncomingHttpHeaders; remotePort?: number }[];
  close(): Promise<void>;
};

type Answer = { status: number; headers?: Record<string, string>; body?: string };

export async function listen(
  host: string,
  port = 0,
  answer: (path: string) => Answer = () => ({ status: 200, body: "ok" }),
): Promise<Listener> {
  const requests: Listener["requests"] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url ?? "", headers: req.headers, remotePort: req.socket.remotePort });
    req.resume();
    req.on("end", () => {
      const { status, headers = {}, body = "" } = answer(req.url ?? "");
      res.writeHead(status, headers).end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as { port: number }).port;
  return {
    host,
    port: bound,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Two listeners on one port: `allowed` on 127.0.0.2, `internal` on 127.0.0.1 (the "loopback-only service"). */
export async function listenPair(answer?: (path: string) => Answer) {
  for (let tries = 0; ; tries++) {
    const allowed = await listen("127.0.0.2", 0, answer);
    try {
      const internal = await listen("127.0.0.1", allowed.port, answer);
      return { allowed, internal, port: allowed.port, close: () => Promise.all([allowed.close(), internal.close()]) };
    } catch (err) {
      await allowed.close();
      if (tries > 5) throw err;
    }
  }
}
