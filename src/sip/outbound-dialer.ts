// Picks up the outbound calls the API assigned to this bridge (the lease holder of their credential
// when they were offered) and places them. A call is claimed in Postgres before it is dialled (its
// `dial.claimedAt` set by one UPDATE), so a NOTIFY, a heartbeat's poll and a hang-up racing each
// other dial it at most once. A NOTIFY wakes it at once; the poll on every heartbeat catches a missed
// one. A call left offered by a bridge that died is the reaper's (it fails the dead bridge's tasks).
import { and, eq, sql } from "drizzle-orm";
import { bareConcludedEvent } from "../calls/call-lifecycle";
import type { Db } from "../db/client";
import { agentTasks, type AssistantKind } from "../db/schema";
import { describeError } from "../errors";
import { coalescingRunner } from "../lib/coalescing-runner";
import { log } from "../log";
import { closeUnanswered } from "./close-unanswered";
import type { OutboundCall, OutboundTask } from "./outbound-call";
import { canceledBeforeAnswer, notPlaced } from "./outbound-outcome";

export type PlaceCall = (task: OutboundTask) => OutboundCall | null;

export class OutboundDialer {
  private readonly calls = new Map<string, OutboundCall>();
  private stopped = false;
  private readonly runner = coalescingRunner(
    () => this.claimAndDial(),
    (error) => log.warn("outbound calls not picked up", { bridgeId: this.bridgeId, error: describeError(error) }),
  );

  constructor(
    private readonly db: Db,
    readonly bridgeId: string,
    private readonly place: PlaceCall,
  ) {}

  /** Looks for calls to place (a NOTIFY for this bridge, a heartbeat). */
  readonly request = () => {
    if (!this.stopped) this.runner.request();
  };

  /** An API hang-up: the call being dialled here is cancelled; one not claimed yet is closed unplaced. */
  async hangup(callId: string) {
    const dialling = this.calls.get(callId);
    if (dialling) return dialling.hangup();
    const [task] = await this.claim(eq(agentTasks.callId, callId));
    if (task) await this.closeUnplaced(task, canceledBeforeAnswer(null), "hung up before it was dialled");
  }

  /** Shutdown: nothing new is dialled, calls still ringing are cancelled, all are waited for. */
  async stop() {
    this.stopped = true;
    await this.runner.stop();
    for (const call of this.calls.values()) call.hangup();
    await Promise.allSettled([...this.calls.values()].map((c) => c.done));
  }

  private async claimAndDial() {
    for (const task of await this.claim()) {
      const call = this.stopped ? null : this.place(task);
      if (!call) {
        await this.closeUnplaced(task, notPlaced(), "this bridge has no user agent for the SIP credential");
        continue;
      }
      this.calls.set(task.callId, call);
      // `done` rejects when the call's end could not be written even after retries: say so, and forget it
      void call.done
        .catch((error) =>
          log.error("call", { callId: task.callId, event: "close_failed", error: describeError(error) }),
        )
        .finally(() => this.calls.delete(task.callId));
    }
  }

  /** Marks this bridge's unclaimed offered outbound calls (or the one `only` names) as claimed. */
  private async claim(only?: ReturnType<typeof eq>): Promise<OutboundTask[]> {
    const rows = await this.db
      .update(agentTasks)
      .set({ dial: sql`${agentTasks.dial} || jsonb_build_object('claimedAt', now())` })
      .where(
        and(
          eq(agentTasks.bridgeId, this.bridgeId),
          eq(agentTasks.status, "offered"),
          eq(agentTasks.direction, "outbound"),
          sql`not (${agentTasks.dial} ? 'claimedAt')`,
          only,
        ),
      )
      .returning({
        callId: agentTasks.callId,
        organizationId: agentTasks.organizationId,
        assistantId: agentTasks.assistantId,
        kind: sql<AssistantKind | null>`(select kind from assistants where id = ${agentTasks.assistantId})`,
        credentialId: agentTasks.credentialId,
        transport: agentTasks.transport,
        dial: agentTasks.dial,
        variables: agentTasks.variables,
      });
    return rows.flatMap((r) =>
      r.dial && r.credentialId
        ? [{ ...r, dial: r.dial, credentialId: r.credentialId, variables: r.variables ?? {} }]
        : [],
    );
  }

  private async closeUnplaced(task: OutboundTask, outcome: ReturnType<typeof notPlaced>, error: string) {
    const event = bareConcludedEvent({ ...task, direction: "outbound" }, null, outcome.endedReason);
    await closeUnanswered(this.db, task, { status: outcome.status, error, sipStatus: outcome.sipStatus, event });
    log.info("call", { callId: task.callId, event: "not_placed", endedReason: outcome.endedReason, error });
  }
}
