// Leases and take-over, one heartbeat at a time: renew our leases, claim free and expired ones, close
// the calls that the previous owner of a taken-over credential left open (it is dead or too late to
// count them), and tell which leases we held at the last beat but hold no more.
import { recoverOrphanedTasks } from "../calls/call-lifecycle";
import type { Db } from "../db/client";
import { log } from "../log";
import type { LeaseKeeper } from "./leases";

export type LeaseBeat = { owned: Set<string>; lost: string[] };

export class LeaseSync {
  private held = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly leases: LeaseKeeper,
  ) {}

  async beat(): Promise<LeaseBeat> {
    const beat = await this.leases.heartbeat();
    for (const { credentialId, previousOwner } of beat.takenOver) {
      const closed = await recoverOrphanedTasks(this.db, previousOwner, { credentialId, error: "bridge lost" });
      log.warn("sip credential taken over", {
        credentialId,
        bridgeId: this.leases.bridgeId,
        previousOwner,
        closedCalls: closed,
      });
    }
    const owned = new Set(beat.owned);
    const lost = [...this.held].filter((id) => !owned.has(id));
    this.held = owned;
    return { owned, lost };
  }

  /** Gives every lease up (clean shutdown). */
  async releaseAll() {
    this.held.clear();
    await this.leases.releaseAll();
  }
}
