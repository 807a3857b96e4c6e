// One HTTP exchange with a destination a tenant chose, through the outbound guard: the name is
// resolved once, every answer checked, and the socket connects to a checked address (the `lookup`
// hook hands node:http the checked answers, so no second lookup can rebind the name; TLS still
// verifies the certificate against the name). Redirects are never followed. Works in Bun and Node.
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
  const remainingMs = Math.max(1, req.timeoutMs - (performance.now() - started));
  return send(target, hostname, lookup, req, remainingMs, started);
}

function send(
  target: URL,
  hostname: string,
  lookup: unknown,
  req: ExchangeRequest,
  remainingMs: number,
  started: number,
): Promise<Exchange> {
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let read = 0;

    const finish = (error: string | null, complete: boolean, truncated = false, timedOut = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        statusCode,
        body: Buffer.concat(chunks),
        complete,
        truncated,
        error,
        refused: false,
        timedOut,
        durationMs: Math.round(performance.now() - started),
      });
      request?.destroy();
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
        // one connection per exchange: a reused keep-alive socket would skip the checked lookup
        agent: false,
        lookup: lookup as never,
        headers: req.headers,
      });
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
