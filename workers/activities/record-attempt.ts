// Writes one attempt and the delivery's new state together, so the API never shows one without the other.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../src/db/client";
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
  const values = {
    startedAt: r.startedAt,
    durationMs: r.res.durationMs,
    statusCode: r.res.statusCode,
    error: r.res.error,
    responseExcerpt: r.res.responseExcerpt,
    nextAttemptAt: r.nextAttemptAt,
  };
  await db.transaction(async (tx) => {
    // an activity re-run after a worker crash re-sends; the row then shows the latest exchange
    await tx
      .insert(hookDeliveryAttempts)
      .values({ deliveryId: r.deliveryId, run: r.run, attempt: r.attempt, ...values })
      .onConflictDoUpdate({
        target: [hookDeliveryAttempts.deliveryId, hookDeliveryAttempts.run, hookDeliveryAttempts.attempt],
        set: values,
      });
    await tx
      .update(hookDeliveries)
      .set({ status: r.status, attemptCount: r.attempt, nextAttemptAt: r.nextAttemptAt, updatedAt: sql`now()` })
      .where(and(eq(hookDeliveries.id, r.deliveryId), eq(hookDeliveries.run, r.run)));
  });
}
