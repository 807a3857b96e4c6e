// One delivery attempt: build the signed request from the frozen row, send it, record the outcome.
import { eq, sql } from "drizzle-orm";
import { hookDeliveries, hookEventBodies, type DeliveryStatus, type HookDeliveryRow } from "../../src/db/schema";
import { preparedQuery } from "../../src/db/prepared";
import { sendHook, type HookResponse } from "../../src/events/send-hook";
import { signWebhook } from "../../src/events/sign";
import { log } from "../../src/log";
import { recordHookAttempt } from "../../src/metrics/metrics";
import { createOutboundGuard, type OutboundGuard } from "../../src/net/outbound-guard";
import type { ActivityDeps } from "./deps";
import { attemptRecorder } from "./record-attempt";

export type AttemptInput = { deliveryId: string; run: number; attempt: number; nextDelayMs: number | null };
/** The delivery row and its body, when the caller has read them already (the dispatcher's claim). */
export type LoadedDelivery = { row: HookDeliveryRow; payload: string };
/** GONE: the delivery row was deleted (its organization went away), or a newer run replaced this one */
export type AttemptOutcome = DeliveryStatus | "GONE";

export function createDeliverAttempt(deps: ActivityDeps) {
  const guard = createOutboundGuard(deps.config.outbound);
  // built once and prepared on each connection: every attempt runs it (bench/hooks: a burst of 1,000)
  const deliveryWithBody = preparedQuery(
    deps.db
      .select({ row: hookDeliveries, payload: hookEventBodies.payload })
      .from(hookDeliveries)
      .innerJoin(hookEventBodies, eq(hookEventBodies.id, hookDeliveries.bodyId))
      .where(eq(hookDeliveries.id, sql.placeholder("id"))),
    "hook_delivery_with_body",
  );
  const recordAttempt = attemptRecorder(deps.db);
  return async function deliverAttempt(input: AttemptInput, loaded?: LoadedDelivery): Promise<AttemptOutcome> {
    const found = loaded ?? (await deliveryWithBody({ id: input.deliveryId }))[0];
    if (!found || found.row.run !== input.run) return "GONE";
    const { row, payload } = found;

    const startedAt = new Date();
    const res = await send(deps, guard, row, payload);
    // a destination the outbound guard refuses stays refused: the delivery fails now, not after 20 tries
    const status: DeliveryStatus = res.ok
      ? "SUCCEEDED"
      : input.nextDelayMs === null || res.refused
        ? "FAILED"
        : "PENDING";
    const nextAttemptAt = status === "PENDING" ? new Date(Date.now() + input.nextDelayMs!) : null;
    await recordAttempt({ ...input, startedAt, res, status, nextAttemptAt });
    recordHookAttempt(status, res.durationMs);
    log.info("hook attempt", {
      deliveryId: row.id,
      callId: row.callId,
      eventType: row.eventType,
      run: input.run,
      attempt: input.attempt,
      statusCode: res.statusCode,
      error: res.error,
      durationMs: res.durationMs,
      status,
    });
    return status;
  };
}

async function send(
  deps: ActivityDeps,
  guard: OutboundGuard,
  row: HookDeliveryRow,
  payload: string,
): Promise<HookResponse> {
  const body = Buffer.from(payload, "utf8");
  let signature = {};
  if (row.secretEncrypted) {
    let secret: string;
    try {
      secret = deps.secretBox.decrypt(row.secretEncrypted);
    } catch {
      // a changed ENCRYPTION_KEY: a failed attempt the operator can see, never an unsigned request
      return {
        ok: false,
        statusCode: null,
        error: "hook secret cannot be decrypted",
        durationMs: 0,
        responseExcerpt: null,
      };
    }
    signature = signWebhook({ id: row.id, timestampSec: Date.now() / 1000, body, secret });
  }
  return sendHook({
    url: row.url,
    method: row.method,
    headers: row.headers,
    signature,
    body,
    timeoutMs: deps.config.hooks.timeoutMs,
    guard,
  });
}
