// What an inbound call knows before its greeting: its own variables (the wire format's or the
// INVITE's), then the call_context extension's answer over them. The POST goes through the outbound
// guard and never holds the caller longer than its timeoutMs; a failure lets the call go on.
import { randomUUID } from "node:crypto";
import type { Transport } from "../db/schema";
import { log } from "../log";
import { recordCallContext } from "../metrics/metrics";
import type { OutboundGuard } from "../net/outbound-guard";
import { postToolJson } from "./tool-webhook";

type Extension = { type: string; parameters: Record<string, unknown> };
type ContextCall = { url: string; headers: Record<string, string>; timeoutMs: number };

const DEFAULT_TIMEOUT_MS = 2000;
// an answer's variables, not a document store
const MAX_ANSWER_BYTES = 64 * 1024;

/** The assistant's call_context extension (the first one), or null. */
export function callContextOf(extensions: Extension[]): ContextCall | null {
  const p = extensions.find((e) => e.type === "call_context")?.parameters;
  if (!p || typeof p.url !== "string") return null;
  return {
    url: p.url,
    headers: (p.headers ?? {}) as Record<string, string>,
    timeoutMs: typeof p.timeoutMs === "number" ? p.timeoutMs : DEFAULT_TIMEOUT_MS,
  };
}

/** An inbound call about to be answered: its callId and variables, or refused by call_context. */
export type InboundStart =
  | { rejected: false; callId: string; variables: Record<string, string> }
  | { rejected: true; callId: string };

/**
 * The call's variables: `given` with the call_context answer's over them (no extension: `given`).
 * `callId` is the one the POST names; the call must run under it.
 */
export async function prepareInboundCall(
  assistant: { extensions: Extension[] },
  transport: Transport,
  given: Record<string, string>,
  guard: OutboundGuard,
  callId: string = randomUUID(),
): Promise<InboundStart> {
  const context = callContextOf(assistant.extensions);
  if (!context) return { rejected: false, callId, variables: given };
  const answer = await postToolJson({
    url: context.url,
    headers: context.headers,
    body: { type: "call_context", callId, transport },
    guard,
    timeoutMs: context.timeoutMs,
    maxResponseBytes: MAX_ANSWER_BYTES,
  });
  const parsed = answer.ok ? parseAnswer(answer.body) : null;
  const outcome = parsed === null ? "failed" : parsed.reject ? "rejected" : "ok";
  recordCallContext(outcome, answer.durationMs);
  log.info("call", {
    callId,
    event: "call_context",
    outcome,
    durationMs: Math.round(answer.durationMs),
    ...(answer.ok ? {} : { status: answer.status, error: answer.error ?? "non-2xx answer" }),
    ...(answer.ok && parsed === null && { error: "the answer is not a JSON object" }),
  });
  if (parsed?.reject) return { rejected: true, callId };
  return { rejected: false, callId, variables: { ...given, ...(parsed?.variables ?? {}) } };
}

/** `{variables?: {name: string}, reject?: true}`; numbers and booleans become their text, other values are dropped. */
function parseAnswer(body: string): { reject: boolean; variables: Record<string, string> } | null {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return null;
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) return null;
  const { reject, variables } = json as Record<string, unknown>;
  return { reject: reject === true, variables: stringVariables(variables) };
}

/** The string-valued entries of a variables object from outside (a start message, an answer). */
export function stringVariables(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) return out;
  for (const [name, v] of Object.entries(value)) {
    if (typeof v === "string") out[name] = v;
    else if (typeof v === "number" || typeof v === "boolean") out[name] = String(v);
  }
  return out;
}
