// One HTTP exchange with a hook endpoint, through the outbound guard (src/net). node:http(s) underneath,
// not fetch: fetch refuses a body on GET.
import { guardedExchange } from "../net/guarded-request";
import { headersRefusal } from "../net/outbound-headers";
import type { OutboundGuard } from "../net/outbound-guard";

export const USER_AGENT = "voice-assistant-service-hooks/0.1";
const MAX_READ_BYTES = 64 * 1024;
const EXCERPT_CHARS = 1024;

export type HookRequest = {
  url: string;
  method: string;
  /** the hook's configured headers */
  headers: Record<string, string>;
  /** the webhook-* signature headers, ours to set */
  signature?: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  guard: OutboundGuard;
};

export type HookResponse = {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
  /** the outbound guard refused the destination or a configured header: no later attempt can succeed */
  refused?: boolean;
};

/** Never throws: every outcome (2xx, error status, redirect, refusal, time-out) is a HookResponse. */
export async function sendHook(req: HookRequest): Promise<HookResponse> {
  const badHeaders = headersRefusal(req.headers);
  if (badHeaders)
    return { ok: false, statusCode: null, error: badHeaders, durationMs: 0, responseExcerpt: null, refused: true };
  // A status line that arrived in time is the answer; a body that keeps trickling after it is cut
  // off, not held against the endpoint.
  const res = await guardedExchange(req.guard, {
    url: req.url,
    method: req.method,
    headers: {
      ...req.headers,
      ...req.signature,
      "user-agent": USER_AGENT,
      "content-type": "application/json",
      "content-length": String(req.body.length),
    },
    body: req.body,
    timeoutMs: req.timeoutMs,
    maxResponseBytes: MAX_READ_BYTES,
  });
  const { statusCode } = res;
  const ok = res.error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
  const redirected = statusCode !== null && statusCode >= 300 && statusCode < 400;
  return {
    ok,
    statusCode,
    error: redirected ? `redirect not followed (status ${statusCode})` : res.error,
    durationMs: res.durationMs,
    responseExcerpt: res.body.length ? res.body.toString("utf8").slice(0, EXCERPT_CHARS) : null,
    ...(res.refused ? { refused: true } : {}),
  };
}
