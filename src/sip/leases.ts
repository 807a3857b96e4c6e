// Which bridge registers which credential: a row per credential in sip_registrations with an owner
// and a lease the owner renews on every heartbeat. A credential nobody holds (new, released, or
// whose owner stopped renewing) is claimed by the next bridge that beats, under row locks, so at most
// one bridge holds it at a time.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { sipRegistrations } from "../db/schema";
import type { RegistrationReport } from "./registration";

export type Heartbeat = { owned: string[]; takenOver: { credentialId: string; previousOwner: string }[] };
/**
 * Claim no more than a fair share: the credentials over the live bridges (bridge_heartbeats), counting
 * at least `bridges` (the workers of one start:bridge), so the first worker to beat does not take
 * everything while its siblings start; a dead worker's share waits for its restart by the supervisor
 * (or for a bridge elsewhere).
 */
export type LeaseShare = { bridges: number };

export class LeaseKeeper {
  /** The last state write per credential: writes are chained so they commit in the order reported. */
  private readonly writes = new Map<string, Promise<unknown>>();

  constructor(
    private readonly db: Db,
    readonly bridgeId: string,
    private readonly ttlMs: number,
    private readonly share: LeaseShare | null = null,
    /**
     * How long this bridge has reached the database without a break: an expired lease is taken over
     * only once it is at least the TTL, so that after an outage longer than the TTL (every lease
     * expired, every owner alive) the owners renew before anyone takes their credentials and calls.
     */
    private readonly watchedMs: () => number = () => Number.POSITIVE_INFINITY,
  ) {}

  /** Renews our leases and claims free or expired ones. */
  async heartbeat(): Promise<Heartbeat> {
    const me = this.bridgeId;
    const until = this.leaseEnd();
    return this.db.transaction(async (tx) => {
      const renewed = await tx.execute<{ credential_id: string }>(
        sql`update sip_registrations set lease_expires_at = ${until} where owner_bridge_id = ${me} returning credential_id`,
      );
      const room = await this.room(tx, renewed.length);
      const limit = (n: number | null) => (n === null ? sql`` : sql`limit ${Math.max(0, n)}`);
      const claimed = await tx.execute<{ credential_id: string }>(sql`
        insert into sip_registrations (credential_id, owner_bridge_id, lease_expires_at)
        select id, ${me}, ${until} from sip_credentials c
        where not exists (select 1 from sip_registrations r where r.credential_id = c.id)
        ${limit(room)}
        on conflict do nothing returning credential_id`);
      // the share covers both kinds of claim together
      const left = this.watchedMs() < this.ttlMs ? 0 : room === null ? null : room - claimed.length;
      const taken = await tx.execute<{ credential_id: string; previous: string | null }>(sql`
        with expired as (
          select credential_id, owner_bridge_id from sip_registrations
          where lease_expires_at < now() and owner_bridge_id is distinct from ${me}
          ${limit(left)} for update skip locked)
        update sip_registrations r set owner_bridge_id = ${me}, lease_expires_at = ${until}, state = 'unregistered', updated_at = now()
        from expired where r.credential_id = expired.credential_id
        returning r.credential_id, expired.owner_bridge_id as previous`);
      return {
        owned: [...renewed, ...claimed, ...taken].map((r) => r.credential_id),
        takenOver: taken.flatMap((r) =>
          r.previous ? [{ credentialId: r.credential_id, previousOwner: r.previous }] : [],
        ),
      };
    });
  }

  /** How many more credentials this bridge may claim now (null: no limit). */
  private async room(tx: Pick<Db, "execute">, owned: number): Promise<number | null> {
    if (!this.share) return null;
    const [counts] = await tx.execute<{ total: number; live: number }>(
      sql`select (select count(*) from sip_credentials)::int as total, (select count(*) from bridge_heartbeats where expires_at > now())::int as live`,
    );
    const bridges = Math.max(counts?.live ?? 1, this.share.bridges, 1);
    return Math.max(0, Math.ceil((counts?.total ?? 0) / bridges) - owned);
  }

  /** Renews the leases we hold, nothing else: one statement, so no slow sync can make them lapse. */
  async renew() {
    await this.db.execute(
      sql`update sip_registrations set lease_expires_at = ${this.leaseEnd()} where owner_bridge_id = ${this.bridgeId}`,
    );
  }

  /** A lease taken or renewed now ends this far ahead, on Postgres' clock. */
  private leaseEnd() {
    return sql`now() + ${this.ttlMs}::int * interval '1 millisecond'`;
  }

  /** Gives our credentials up at once (clean shutdown), so another bridge need not wait for expiry. */
  async releaseAll() {
    await this.db
      .update(sipRegistrations)
      .set({ ownerBridgeId: null, leaseExpiresAt: sql`now()`, state: "unregistered", updatedAt: sql`now()` })
      .where(eq(sipRegistrations.ownerBridgeId, this.bridgeId));
  }

  /**
   * The registration state the API shows; only the owner writes it. A credential changed through the
   * API reports "unregistered" (old agent) and then "registered" (new one) within milliseconds: run
   * concurrently, the older write could land last.
   */
  report(credentialId: string, report: RegistrationReport): Promise<unknown> {
    const write = (this.writes.get(credentialId) ?? Promise.resolve())
      .catch(() => {})
      .then(() =>
        this.db
          .update(sipRegistrations)
          .set({ state: report.state, lastStatus: report.status, lastError: report.error, updatedAt: sql`now()` })
          .where(
            and(eq(sipRegistrations.credentialId, credentialId), eq(sipRegistrations.ownerBridgeId, this.bridgeId)),
          ),
      );
    this.writes.set(credentialId, write);
    void write
      .finally(() => this.writes.get(credentialId) === write && this.writes.delete(credentialId))
      .catch(() => {});
    return write;
  }
}
