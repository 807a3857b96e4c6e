// POST P/calls: an outbound call is an agent task offered under the credential's maxAgentTasks,
// assigned to the bridge that holds the credential's lease, which a NOTIFY wakes to place it. The
// count, the lease read and the insert run in one transaction under the same advisory lock as an
// inbound reservation (reserve_agent_task), so inbound and outbound share the cap exactly.
import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../db/client";
import { OUTBOUND_CALLS_CHANNEL, agentTasks, assistants, sipCredentials, sipPhoneNumbers } from "../db/schema";
import type { OutboundDial } from "../db/schema";
import { AppError, badRequest, notFound, tooManyRequests } from "../errors";
import { DESTINATION_MESSAGE, E164, SIP_URI, type CallInput } from "../models/calls";
import type { OutboundGuard } from "../net/outbound-guard";
import { credentialLock } from "../sip/reserve-task";
import type { OrgScope } from "./auth";

// a slot frees when a call ends: minutes, but often sooner
const retryAfterFullSec = 5;
// a bridge claims a free lease within a heartbeat or two
const retryAfterNoBridgeSec = 5;

/** `to` as dialled: an E.164 number, or a sip: URI (port 1..65535) whose host the outbound guard lets us reach. */
export function checkDestination(guard: OutboundGuard, to: string, field = "to"): string {
  if (E164.test(to)) return to;
  const uri = SIP_URI.exec(to);
  if (!uri) throw badRequest(field, DESTINATION_MESSAGE);
  const refusal = guard.configuredHostRefusal(uri[1]!.replace(/^\[|\]$/g, ""));
  if (refusal) throw badRequest(field, `not an allowed destination: ${refusal}`);
  return to;
}

export type CallDefaults = { maxCallMs: number };

/** Who calls: the assistant or agent and the caller id's number with its SIP credential. */
export type CallOrigin = { ownerId: string; phoneNumberId: string; from: string; credentialId: string };

/** Resolves the assistant (or agent) and the caller id of a call or campaign; 404 / 400 / 409 naming the field. */
export async function resolveCallOrigin(
  db: DbOrTx,
  scope: OrgScope,
  input: { assistantId?: string; agentId?: string; phoneNumberId?: string },
): Promise<CallOrigin> {
  if ((input.assistantId === undefined) === (input.agentId === undefined))
    throw badRequest(input.assistantId ? "agentId" : "assistantId", "give exactly one of assistantId and agentId");
  const kind = input.assistantId ? "assistant" : "agent";
  const [owner] = await db
    .select({ id: assistants.id, telephoneNumberId: assistants.telephoneNumberId })
    .from(assistants)
    .where(
      and(
        eq(assistants.id, (input.assistantId ?? input.agentId)!),
        eq(assistants.organizationId, scope.organizationId),
        eq(assistants.kind, kind),
      ),
    );
  if (!owner) throw notFound(kind);
  const phoneNumberId = input.phoneNumberId ?? owner.telephoneNumberId;
  if (!phoneNumberId) throw badRequest("phoneNumberId", `the ${kind} has no telephoneNumberId: give the caller id`);
  const [number] = await db
    .select({ phoneNumber: sipPhoneNumbers.phoneNumber, credentialId: sipPhoneNumbers.credentialId })
    .from(sipPhoneNumbers)
    .where(and(eq(sipPhoneNumbers.id, phoneNumberId), eq(sipPhoneNumbers.organizationId, scope.organizationId)));
  if (!number) throw notFound("phone number");
  if (!number.credentialId) throw new AppError("CONFLICT", "the phone number has no SIP credential");
  return { ownerId: owner.id, phoneNumberId, from: number.phoneNumber, credentialId: number.credentialId };
}

/** The credential's open tasks, its cap and its lease holder, under the reservation lock (held until the transaction ends). */
export async function lockCredentialCapacity(tx: DbOrTx, credentialId: string) {
  await tx.execute(credentialLock(credentialId));
  const [state] = await tx.execute<{ open: number; cap: number; bridge: string | null }>(sql`
    select
      (select count(*) from ${agentTasks} where credential_id = ${credentialId} and status in ('offered', 'active'))::int as open,
      (select max_agent_tasks from ${sipCredentials} where id = ${credentialId}) as cap,
      (select owner_bridge_id from sip_registrations where credential_id = ${credentialId} and lease_expires_at > now()) as bridge`);
  return state ?? { open: 0, cap: 0, bridge: null };
}

export type OfferedCall = { to: string; variables: Record<string, string>; dial: OutboundDial; campaignId?: string };

/** Inserts offered outbound tasks for the lease holder `bridge` (under lockCredentialCapacity) and wakes it. */
export async function offerCalls(
  tx: DbOrTx,
  organizationId: string,
  origin: CallOrigin,
  bridge: string,
  calls: OfferedCall[],
) {
  if (calls.length === 0) return [];
  // ids made here, so the caller knows which task is which call's
  const ids = calls.map(() => randomUUID());
  await tx.insert(agentTasks).values(
    calls.map((call, i) => ({
      id: ids[i],
      organizationId,
      callId: randomUUID(),
      assistantId: origin.ownerId,
      credentialId: origin.credentialId,
      phoneNumberId: origin.phoneNumberId,
      transport: { type: "sip" as const, calledNumber: call.to, callingNumber: origin.from },
      status: "offered" as const,
      direction: "outbound" as const,
      bridgeId: bridge,
      variables: call.variables,
      campaignId: call.campaignId ?? null,
      dial: call.dial,
    })),
  );
  await tx.execute(sql`select pg_notify(${OUTBOUND_CALLS_CHANNEL}, ${bridge})`);
  return ids;
}

/** Offers the call and returns its agent task's id. */
export async function placeOutboundCall(
  db: Db,
  guard: OutboundGuard,
  scope: OrgScope,
  input: CallInput,
  defaults: CallDefaults,
): Promise<string> {
  const origin = await resolveCallOrigin(db, scope, input);
  const to = checkDestination(guard, input.to);
  const dial: OutboundDial = {
    to,
    from: origin.from,
    ringTimeoutMs: (input.ringTimeoutSeconds ?? 30) * 1000,
    maxDurationMs: input.maxDurationSeconds === undefined ? defaults.maxCallMs : input.maxDurationSeconds * 1000,
    voicemail: input.voicemail ?? { action: "continue" },
  };
  return db.transaction(async (tx) => {
    const state = await lockCredentialCapacity(tx, origin.credentialId);
    if (state.open >= state.cap) throw tooManyRequests("the SIP credential is at maxAgentTasks", retryAfterFullSec);
    if (!state.bridge)
      throw new AppError(
        "UNAVAILABLE",
        "no bridge holds the SIP credential: retry shortly",
        undefined,
        retryAfterNoBridgeSec,
      );
    const [id] = await offerCalls(tx, scope.organizationId, origin, state.bridge, [
      { to, variables: input.variables ?? {}, dial },
    ]);
    return id!;
  });
}
