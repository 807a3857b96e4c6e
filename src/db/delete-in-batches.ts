// Deletes rows that may be many (expired keys after a busy day) a bounded batch at a time: each
// statement locks and removes at most `batchSize` rows and sends back one count, not the rows.
import { sql, type SQL } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type { DbOrTx } from "./client";

/** Deletes the rows of `table` matching `where` until none is left; returns how many went. */
export async function deleteInBatches(db: DbOrTx, table: PgTable, where: SQL, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    // rows another process's batch holds are skipped: any number of processes may run this at once
    const [batch] = await db.execute<{ deleted: number }>(sql`
      with gone as (
        delete from ${table} where ctid = any(array(
          select ctid from ${table} where ${where} limit ${batchSize} for update skip locked))
        returning 1)
      select count(*)::int as deleted from gone`);
    total += batch!.deleted;
    if (batch!.deleted < batchSize) return total;
  }
}
