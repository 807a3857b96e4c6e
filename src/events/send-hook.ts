// One HTTP exchange with a hook endpoint. node:http(s), not fetch: fetch refuses a body on GET.
import http from "node:http";
import https from "node:https";

export const USER_AGENT = "voice-assistant-service-hooks/0.1";
const MAX_READ_BYTES = 64 * 1024;
const EXCERPT_CHARS = 1024;

export type HookRequest = {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
};

export type HookResponse = {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
};

/** Never throws: every outcome (2xx, error status, redirect, refusal, time-out) is a HookResponse. */
export function sendHook(req: HookRequest): Promise<HookResponse> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let read = 0;

    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const excerpt = chunks.length ? Buffer.concat(chunks).toString("utf8").slice(0, EXCERPT_CHARS) : null;
      const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      if (!ok && error === null && statusCode !== null && statusCode >= 300 && statusCode < 400) {
        error = `redirect not followed (status ${statusCode})`;
      }
      resolve({ ok, statusCode, error, durationMs: Math.round(performance.now() - started), responseExcerpt: excerpt });
      request.destroy();
    };

    let target: URL;
    try {
      target = new URL(req.url);
      if (target.protocol !== "http:" && target.protocol !== "https:") throw new Error(`unsupported scheme ${target.protocol}`);
    } catch (err) {
      resolve({ ok: false, statusCode: null, error: `invalid url: ${(err as Error).message}`, durationMs: 0, responseExcerpt: null });
      return;
    }

    const client = target.protocol === "https:" ? https : http;
    let request: http.ClientRequest;
    try {
      request = client.request(target, {
        method: req.method,
        // one connection per attempt: a reused keep-alive socket closed by the peer would fail an attempt for nothing
        agent: false,
        headers: {
          ...req.headers,
          "user-agent": USER_AGENT,
          "content-type": "application/json",
          "content-length": String(req.body.length),
        },
      });
    } catch (err) {
      // e.g. a configured header value with characters HTTP does not allow
      resolve({ ok: false, statusCode: null, error: `request not sent: ${(err as Error).message}`, durationMs: 0, responseExcerpt: null });
      return;
    }

    // One deadline for the whole exchange. A status line that arrived in time is the answer; a body
    // that keeps trickling after it is cut off, not held against the endpoint.
    const timer = setTimeout(
      () => finish(statusCode === null ? `no response within ${req.timeoutMs} ms` : null),
      req.timeoutMs,
    );

    request.on("response", (res) => {
      statusCode = res.statusCode ?? null;
      res.on("data", (chunk: Buffer) => {
        if (read >= MAX_READ_BYTES) return;
        chunks.push(chunk.subarray(0, MAX_READ_BYTES - read));
        read += chunk.length;
        if (read >= MAX_READ_BYTES) finish(null);
      });
      res.on("end", () => finish(null));
      res.on("error", () => finish(null));
    });
    request.on("error", (err: NodeJS.ErrnoException) => finish(statusCode === null ? describe(err) : null));
    request.end(req.body);
  });
}

function describe(err: NodeJS.ErrnoException): string {
  return err.code ? `${err.code}: ${err.message}` : err.message;
}
