// A real HTTP endpoint on 127.0.0.1 that records every request and answers as the test scripts it.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";

export type ReceivedRequest = {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** when the request head arrived (the first byte we can observe), performance.timeOrigin based */
  receivedAt: number;
};

/** What to answer: a status (and body, after `delayMs`), or "hang" to never answer at all. */
export type Reply = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | "hang";
export type Responder = (req: ReceivedRequest, index: number) => Reply;

export type Receiver = {
  url: string;
  requests: ReceivedRequest[];
  respond(fn: Responder): void;
  /** resolves when at least n requests have fully arrived */
  waitForRequests(n: number, timeoutMs: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
};

export const always =
  (status: number): Responder =>
  () => ({ status });
/** fails `k` times with `status`, then answers 200 */
export const failTimes =
  (k: number, status = 500): Responder =>
  (_req, i) => ({ status: i < k ? status : 200 });

export async function startReceiver(responder: Responder = always(200)): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: (() => void)[] = [];
  const hung: ServerResponse[] = [];
  let current = responder;

  const server = createServer((req, res) => {
    const receivedAt = performance.timeOrigin + performance.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
        receivedAt,
      };
      const index = requests.push(received) - 1;
      for (const wake of waiters.splice(0)) wake();
      const reply = current(received, index);
      if (reply === "hang") return void hung.push(res);
      const answer = () => res.writeHead(reply.status, reply.headers).end(reply.body ?? "");
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond: (fn) => {
      current = fn;
    },
    async waitForRequests(n, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`receiver got ${requests.length} of ${n} requests within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      return requests;
    },
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
