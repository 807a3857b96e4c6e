// maxAgentTasks across every bridge: the offered task is inserted only after counting the
// credential's open tasks under a transaction-scoped advisory lock on the credential, so simultaneous
// INVITEs (on any bridge) are serialised and the cap is never overshot. The lock, the count and the
// insert run inside Postgres (reserve_agent_task, migration 0004): one round trip per INVITE, as a
// prepared statement (executePrepared). Unprepared, postgres.js sent it in two halves (parse and
// describe, then on the answer bind and execute): the backend waited for the bridge's event loop
// between them (ClientRead in pg_stat_activity), a second wait on a loop that is busy starting calls.
// On the answer path's own connections (answerPathOf), not behind the calls' writes in the pool.
import { sql } from "drizzle-orm";
import { answerPathOf, type Db } from "../db/client";
import { executePrepared } from "../db/prepared";
import type { Transport } from "../db/schema";

export type Reservation = {
  callId: string;
  organizationId: string;
  assistantId: string;
  credentialId: string;
  phoneNumberId: string;
  transport: Transport;
  bridgeId: string;
};

/** The lock that serialises reservations of one credential (transaction-scoped; the same key as reserve_agent_task's). */
export const credentialLock = (credentialId: string) =>
  sql`select pg_advisory_xact_lock(hashtextextended(${credentialId}::text, 0))`;

/** True when the call got a slot (its task is now `offered`), false when the credential is full. */
export async function reserveAgentTask(db: Db, r: Reservation): Promise<boolean> {
  const [row] = await executePrepared<{ reserved: boolean }>(
    answerPathOf(db),
    sql`select reserve_agent_task(${r.callId}, ${r.organizationId}, ${r.assistantId}, ${r.credentialId}, ${r.phoneNumberId}, ${JSON.stringify(r.transport)}::jsonb, ${r.bridgeId}) as reserved`,
  );
  return row?.reserved === true;
}
