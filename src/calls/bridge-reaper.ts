// Every bridge beats: its row in bridge_heartbeats is renewed every `intervalMs` and expires `ttlMs`
// later. A bridge that stops beating (SIGKILL, a replaced pod that never comes back under its id) has
// its open calls concluded by whichever live bridge beats next: failed with "bridge lost", endedAt
// now, call_concluded with what the task row knows. That frees their maxAgentTasks slots.
// A bridge judges only what it saw: it reaps once it has reached the database without a break for a
// whole TTL, so after an outage longer than the TTL (every row expired, every bridge alive) the
// bridges renew their rows before any of them would take the others for dead.
import { and, eq, inArray, lt, ne, sql } from "drizzle-orm";
import type { DatabaseAvailability } from "../db/availability";
import type { Db } from "../db/client";
import { agentTasks, bridgeHeartbeats } from "../db/schema";
import { describeError } from "../errors";
import { coalescingRunner } from "../lib/coalescing-runner";
import { log } from "../log";
import { recoverOrphanedTasks } from "./call-lifecycle";

export const bridgeLostError = "bridge lost";

export type ReaperOptions = { intervalMs: number; ttlMs: number };

export class BridgeReaper {
  private readonly runner = coalescingRunner(
    () => this.beat(),
    (error) => log.warn("bridge heartbeat failed", { bridgeId: this.bridgeId, error: describeError(error) }),
  );
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly db: Db,
    private readonly availability: DatabaseAvailability,
    readonly bridgeId: string,
    private readonly options: ReaperOptions,
  ) {}

  /** Beats once (so this bridge counts as alive before it takes calls), then every interval. */
  async start() {
    await this.beat();
    this.timer = setInterval(this.runner.request, this.options.intervalMs);
  }

  /** Renews our row, then concludes the calls of bridges whose rows expired. */
  async beat() {
    const expiresAt = sql`now() + ${this.options.ttlMs}::int * interval '1 millisecond'`;
    await this.db
      .insert(bridgeHeartbeats)
      .values({ bridgeId: this.bridgeId, expiresAt })
      .onConflictDoUpdate({ target: bridgeHeartbeats.bridgeId, set: { expiresAt } });
    await this.reap();
  }

  /** Stops beating and removes our row: a clean stop has ended its calls itself. */
  async stop() {
    if (this.timer) clearInterval(this.timer);
    await this.runner.stop();
    await this.db.delete(bridgeHeartbeats).where(eq(bridgeHeartbeats.bridgeId, this.bridgeId));
  }

  private async reap() {
    if (this.availability.continuousMs() < this.options.ttlMs) return;
    const lost = await this.db
      .selectDistinct({ bridgeId: bridgeHeartbeats.bridgeId })
      .from(bridgeHeartbeats)
      .innerJoin(agentTasks, eq(agentTasks.bridgeId, bridgeHeartbeats.bridgeId))
      .where(
        and(
          lt(bridgeHeartbeats.expiresAt, sql`now()`),
          ne(bridgeHeartbeats.bridgeId, this.bridgeId),
          inArray(agentTasks.status, ["offered", "active"]),
        ),
      );
    for (const { bridgeId } of lost) {
      // each task is concluded once: another live bridge reaping at the same time writes nothing twice
      const closed = await recoverOrphanedTasks(this.db, bridgeId, { error: bridgeLostError });
      log.warn("bridge lost: its calls were concluded", { bridgeId: this.bridgeId, lostBridgeId: bridgeId, closed });
    }
    // a dead bridge's row goes once it has nothing left open (a bridge that beats again writes it anew)
    await this.db.execute(sql`
      delete from bridge_heartbeats h where h.expires_at < now() and h.bridge_id <> ${this.bridgeId}
      and not exists (select 1 from agent_tasks t where t.bridge_id = h.bridge_id and t.status in ('offered', 'active'))`);
  }
}
