// Writes attempts and their deliveries' new state, one statement for many attempts (one round trip,
// one implicit transaction), so the API never shows an attempt without its delivery's state. Attempts
// that end while a write is under way go out together in the next one: under a burst one statement
// records dozens of attempts (bench/hooks: two statements per attempt cost Postgres and the worker
// more than the POST), and an attempt alone is written at once.
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

/** at most this many attempts in one statement */
const MAX_BATCH = 256;

/** Records attempts in one statement. An activity re-run after a worker crash re-sends; the attempt row then shows the latest exchange. */
export async function recordAttempts(db: Db, records: readonly AttemptRecord[]): Promise<void> {
  // one parameter for any number of attempts: one prepared statement, whatever the batch's size
  const input = JSON.stringify(
    records.map((r) => ({
      delivery_id: r.deliveryId,
      run: r.run,
      attempt: r.attempt,
      started_at: r.startedAt.toISOString(),
      duration_ms: r.res.durationMs,
      status_code: r.res.statusCode,
      error: r.res.error,
      response_excerpt: r.res.responseExcerpt,
      next_attempt_at: r.nextAttemptAt?.toISOString() ?? null,
      status: r.status,
    })),
  );
  await executePrepared(
    db,
    sql`
    with input as (
      select * from jsonb_to_recordset(${input}::jsonb) as t(delivery_id uuid, run int, attempt int,
        started_at timestamptz, duration_ms int, status_code int, error text, response_excerpt text,
        next_attempt_at timestamptz, status text)
    ), attempt as (
      insert into ${hookDeliveryAttempts}
        (delivery_id, run, attempt, started_at, duration_ms, status_code, error, response_excerpt, next_attempt_at)
      select delivery_id, run, attempt, started_at, duration_ms, status_code, error, response_excerpt, next_attempt_at
      from input
      on conflict (delivery_id, run, attempt) do update set
        started_at = excluded.started_at, duration_ms = excluded.duration_ms, status_code = excluded.status_code,
        error = excluded.error, response_excerpt = excluded.response_excerpt, next_attempt_at = excluded.next_attempt_at
    )
    update ${hookDeliveries} d set status = i.status, attempt_count = i.attempt, next_attempt_at = i.next_attempt_at,
      updated_at = now()
    from input i where d.id = i.delivery_id and d.run = i.run`,
  );
}

/**
 * Records each attempt given to it, gathering those that arrive while a statement is under way into the
 * next one. Resolves when the attempt is recorded; rejects when its own row cannot be (a batch that fails
 * is written again one attempt at a time, so one bad row fails only its own attempt).
 */
export function attemptRecorder(db: Db): (record: AttemptRecord) => Promise<void> {
  type Queued = { record: AttemptRecord; resolve: () => void; reject: (error: unknown) => void };
  let queue: Queued[] = [];
  let writing = false;

  const write = async () => {
    writing = true;
    try {
      while (queue.length > 0) {
        const batch = queue.slice(0, MAX_BATCH);
        queue = queue.slice(batch.length);
        try {
          const records = batch.map((q) => q.record);
          await recordAttempts(db, records);
          for (const q of batch) q.resolve();
        } catch (error) {
          if (batch.length === 1) batch[0]!.reject(error);
          else await Promise.all(batch.map((q) => recordAttempts(db, [q.record]).then(q.resolve, q.reject)));
        }
      }
    } finally {
      writing = false;
    }
  };

  return (record) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ record, resolve, reject });
      if (!writing) void write();
    });
}
