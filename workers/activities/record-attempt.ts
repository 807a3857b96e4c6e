// Writes one attempt and the delivery's new state in one statement (one round trip, one implicit
// transaction), so the API never shows one without the other.
import { sql } from "drizzle-orm";
import type { Db } from "../../src/db/client";
import { executePrepared } from "../../src/db/prepared";
import { hookDeliveries, hookDeliveryAttempts, type DeliveryStatus } from "../../src/db/schema";
import type { HookResponse } from "../../src/events/send-hook";

export type AttemptRecord = {
  deliveryId: string;
  run: number;
  attempt: number;
  startedAt: Date;
  res: HookResponse;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
};

export async function recordAttempt(db: Db, r: AttemptRecord): Promise<void> {
  const next = r.nextAttemptAt?.toISOString() ?? null;
  // an activity re-run after a worker crash re-sends; the attempt row then shows the latest exchange
  await executePrepared(
    db,
    sql`
    with attempt as (
      insert into ${hookDeliveryAttempts}
        (delivery_id, run, attempt, started_at, duration_ms, status_code, error, response_excerpt, next_attempt_at)
      values (${r.deliveryId}, ${r.run}, ${r.attempt}, ${r.startedAt.toISOString()}, ${r.res.durationMs}, ${r.res.statusCode},
        ${r.res.error}, ${r.res.responseExcerpt}, ${next})
      on conflict (delivery_id, run, attempt) do update set
        started_at = excluded.started_at, duration_ms = excluded.duration_ms, status_code = excluded.status_code,
        error = excluded.error, response_excerpt = excluded.response_excerpt, next_attempt_at = excluded.next_attempt_at
    )
    update ${hookDeliveries} set status = ${r.status}, attempt_count = ${r.attempt}, next_attempt_at = ${next}, updated_at = now()
    where id = ${r.deliveryId} and run = ${r.run}`,
  );
}
