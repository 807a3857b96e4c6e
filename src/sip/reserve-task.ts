// maxAgentTasks across every bridge: the offered task is inserted only after counting the
// credential's open tasks under a transaction-scoped advisory lock on the credential, so simultaneous
// INVITEs (on any bridge) are serialised and the cap is never overshot.
import { and, count, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { agentTasks, sipCredentials, type Transport } from "../db/schema";

export type Reservation = {
  callId: string;
  organizationId: string;
  assistantId: string;
  credentialId: string;
  phoneNumberId: string;
  transport: Transport;
  bridgeId: string;
};

/** The lock that serialises reservations of one credential (transaction-scoped). */
export const credentialLock = (credentialId: string) => sql`select pg_advisory_xact_lock(hashtextextended(${credentialId}::text, 0))`;

/** True when the call got a slot (its task is now `offered`), false when the credential is full. */
export function reserveAgentTask(db: Db, reservation: Reservation): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.execute(credentialLock(reservation.credentialId));
    const [credential] = await tx.select({ max: sipCredentials.maxAgentTasks }).from(sipCredentials).where(eq(sipCredentials.id, reservation.credentialId));
    const [open] = await tx
      .select({ n: count() })
      .from(agentTasks)
      .where(and(eq(agentTasks.credentialId, reservation.credentialId), inArray(agentTasks.status, ["offered", "active"])));
    if (!credential || open!.n >= credential.max) return false;
    await tx.insert(agentTasks).values({ ...reservation, status: "offered" });
    return true;
  });
}
