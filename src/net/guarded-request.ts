// One HTTP exchange with a destination a tenant chose, through the outbound guard: the name is
// resolved once, every answer checked, and the socket connects to a checked address (the `lookup`
// hook hands node:http the checked answers, so no second lookup can rebind the name; TLS still
// verifies the certificate against the name). Redirects are never followed. Works in Bun and Node.
//
// Under Node (the hook worker) connections are kept alive and reused, pinned: a socket is reused only by
// a request of the same guard whose lookup just now gave the same checked addresses, so a reused
// connection always goes where a fresh one would be allowed to (a new connection per attempt cost the
// worker and the receiver a TCP handshake each: bench/hooks). A request that fails on a reused socket
// before any answer (the endpoint closed it meanwhile) is sent once more on a new connection. Bun's
// node:http pools connections its own way, by name: there every exchange has a connection of its own.
//
// API: guardedExchange(guard, request) -> Promise<Exchange>; never throws.
import http from "node:http";
import https from "node:https";
import { isIPv6 } from "node:net";
import { OutboundRefusedError, type OutboundGuard } from "./outbound-guard";

export type ExchangeRequest = {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | string;
  /** one deadline for resolving, connecting, the status line and the body */
  timeoutMs: number;
  /** the body is read up to this many bytes, then the exchange ends with truncated: true */
  maxResponseBytes: number;
};

export type Exchange = {
  statusCode: number | null;
  body: Buffer;
  /** the whole body arrived */
  complete: boolean;
  truncated: boolean;
  /** set when no status line arrived (refused, unreachable, time-out, invalid request) */
  error: string | null;
  /** the outbound guard refused the destination: permanent, retrying cannot help */
  refused: boolean;
  /** the deadline passed before the status line */
  timedOut: boolean;
  durationMs: number;
};

type LookupCallback = (
  err: Error | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;

/** A keep-alive agent whose pool is keyed by the checked addresses too (the `pinned` request option). */
class PinnedAgent extends http.Agent {
  override getName(options: http.ClientRequestArgs & { pinned?: string }): string {
    return `${super.getName(options)}|${options.pinned ?? ""}`;
  }
}
class PinnedHttpsAgent extends https.Agent {
  override getName(options: https.RequestOptions & { pinned?: string }): string {
    return `${super.getName(options)}|${options.pinned ?? ""}`;
  }
}
/** below the 5 s a Node server keeps an idle connection (servers that say less in Keep-Alive are heeded) */
const IDLE_SOCKET_MS = 4_000;
const keepAlive = typeof Bun === "undefined";
/** per guard: a guard with another policy never reuses a connection this one made */
const agents = new WeakMap<OutboundGuard, { http: http.Agent; https: https.Agent }>();
function agentsOf(guard: OutboundGuard) {
  let found = agents.get(guard);
  if (!found) {
    const options = { keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: "lifo" as const };
    found = { http: new PinnedAgent(options), https: new PinnedHttpsAgent(options) };
    agents.set(guard, found);
  }
  return found;
}

export async function guardedExchange(guard: OutboundGuard, req: ExchangeRequest): Promise<Exchange> {
  const started = performance.now();
  const failed = (error: string, flags: { refused?: boolean; timedOut?: boolean } = {}) =>
    noAnswer(started, error, flags);

  let target: URL;
  try {
    target = new URL(req.url);
  } catch (err) {
    return failed(`invalid url: ${(err as Error).message}`);
  }
  if (target.protocol !== "http:" && target.protocol !== "https:")
    return failed(`invalid url: unsupported scheme ${target.protocol}`);
  const hostname = target.hostname.replace(/^\[|\]$/g, "");

  let addresses: string[];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Error(`no response within ${req.timeoutMs} ms (resolving ${hostname})`);
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(expired), req.timeoutMs);
    });
    addresses = await Promise.race([guard.resolveAllowed(hostname), deadline]);
  } catch (err) {
    if (err instanceof OutboundRefusedError) return failed(err.message, { refused: true });
    return failed((err as Error).message, { timedOut: err === expired });
  } finally {
    clearTimeout(timer);
  }

  const checked = addresses.map((address) => ({ address, family: isIPv6(address) ? 6 : 4 }));
  const lookup = (_host: string, options: { all?: boolean } | number, callback: LookupCallback) => {
    if (typeof options === "object" && options.all) callback(null, checked);
    else callback(null, checked[0]!.address, checked[0]!.family);
  };
  const remaining = () => Math.max(1, req.timeoutMs - (performance.now() - started));
  const agent = keepAlive ? agentsOf(guard)[target.protocol === "https:" ? "https" : "http"] : false;
  const pinned = addresses.join(" ");
  const first = await send({ target, hostname, lookup, req, remainingMs: remaining(), started, agent, pinned });
  // the endpoint closed a kept-alive connection as it was reused: once more, on a connection of its own
  if (first.staleSocket)
    return send({ target, hostname, lookup, req, remainingMs: remaining(), started, agent: false });
  return first;
}

type Sending = {
  target: URL;
  hostname: string;
  lookup: unknown;
  req: ExchangeRequest;
  remainingMs: number;
  started: number;
  agent: http.Agent | false;
  pinned?: string;
};

function send({
  target,
  hostname,
  lookup,
  req,
  remainingMs,
  started,
  agent,
  pinned,
}: Sending): Promise<Exchange & { staleSocket?: boolean }> {
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let read = 0;

    const finish = (error: string | null, complete: boolean, truncated = false, timedOut = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const staleSocket = statusCode === null && !timedOut && request?.reusedSocket === true;
      resolve({
        ...(staleSocket ? { staleSocket } : {}),
        statusCode,
        body: Buffer.concat(chunks),
        complete,
        truncated,
        error,
        refused: false,
        timedOut,
        durationMs: Math.round(performance.now() - started),
      });
      // a whole answer leaves its connection to the agent for the next request; any other is closed
      if (!complete || agent === false) request?.destroy();
    };

    const client = target.protocol === "https:" ? https : http;
    let request: http.ClientRequest | undefined;
    try {
      request = client.request({
        protocol: target.protocol,
        hostname,
        port: target.port || undefined,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        // reused only under the same checked addresses (PinnedAgent), else a connection of its own
        agent,
        pinned,
        lookup: lookup as never,
        headers: req.headers,
      } as http.RequestOptions);
    } catch (err) {
      // e.g. a header value with characters HTTP does not allow
      resolve(noAnswer(started, `request not sent: ${(err as Error).message}`));
      return;
    }

    const timer = setTimeout(
      () =>
        finish(
          statusCode === null ? `no response within ${req.timeoutMs} ms` : null,
          false,
          false,
          statusCode === null,
        ),
      remainingMs,
    );

    request.on("response", (res) => {
      statusCode = res.statusCode ?? null;
      res.on("data", (chunk: Buffer) => {
        if (settled) return;
        const room = req.maxResponseBytes - read;
        chunks.push(chunk.subarray(0, room));
        read += chunk.length;
        if (read > req.maxResponseBytes) finish(null, false, true);
      });
      res.on("end", () => finish(null, true));
      res.on("error", () => finish(null, false));
    });
    request.on("error", (err: NodeJS.ErrnoException) =>
      finish(statusCode === null ? (err.code ? `${err.code}: ${err.message}` : err.message) : null, false),
    );
    request.end(req.body);
  });
}

function noAnswer(started: number, error: string, flags: { refused?: boolean; timedOut?: boolean } = {}): Exchange {
  const { refused = false, timedOut = false } = flags;
  const durationMs = Math.round(performance.now() - started);
  return {
    statusCode: null,
    body: Buffer.alloc(0),
    complete: false,
    truncated: false,
    error,
    refused,
    timedOut,
    durationMs,
  };
}
