// One INVITE from a trunk, to the end of the call: route the dialled number, reserve a slot under
// maxAgentTasks (486 when full), bind RTP and answer, then run the shared call over RTP. Every way it
// can end (CANCEL, a failed answer, BYE either way, RTP time-out, shutdown) closes the task.
import { randomUUID } from "node:crypto";
import type { Invitation } from "sip.js";
import { SessionState } from "sip.js";
import { bareConcludedEvent } from "../calls/call-lifecycle";
import type { CallHandle } from "../calls/caller-transport";
import { startCall } from "../calls/run-call";
import { prepareInboundCall } from "../calls/call-context";
import { createOutboundGuard, type AddressRefusal } from "../net/outbound-guard";
import { startBudget } from "../calls/start-budget";
import type { Transport } from "../db/schema";
import { describeError } from "../errors";
import { log } from "../log";
import { PortsExhausted } from "../media/port-pool";
import { openSipCallMedia, superviseAnsweredCall, type SipCallContext, type SipCallMedia } from "./answered-call";
import { callerIdentity } from "./caller-identity";
import { closeUnanswered } from "./close-unanswered";
import { inviteVariables } from "./invite-variables";
import { RtpDestinationRefused, UnusableSdp, mediaTarget } from "./media-target";
import { reserveAgentTask } from "./reserve-task";
import { routeCall } from "./route-call";
import { sipCallerTransport } from "./sip-caller-transport";
import { originalUserHeader } from "./sip-transport";

export type InboundContext = SipCallContext;

/** With a 503: the trunk may try this bridge again (or another route) in a moment. */
export const retryAfter = "Retry-After: 5";

export async function handleInvite(ctx: InboundContext, invitation: Invitation): Promise<void> {
  const received = performance.now();
  // only a CANCEL is the caller's doing: sip.js also ends the session when our answer fails
  let callerCancelled = false;
  invitation.delegate = {
    ...invitation.delegate,
    onCancel: () => {
      callerCancelled = true;
    },
  };
  const since = () => Math.round(performance.now() - received);
  const { db, config } = ctx.deps;
  const request = invitation.request;
  const requestUser = request.getHeader(originalUserHeader);
  const identity = callerIdentity({
    requestUser: requestUser ? decodeURIComponent(requestUser) : null,
    to: request.getHeader("To") ?? "",
    from: request.getHeader("From") ?? "",
    assertedIdentity: request.getHeader("P-Asserted-Identity") ?? null,
    privacy: request.getHeader("Privacy") ?? null,
  });
  const transport: Transport = { type: "sip", ...identity };
  const fields = { sipCallId: request.callId, credentialId: ctx.credentialId, calledNumber: identity.calledNumber };

  // routing and the reservation answer within the call-start budget, or the INVITE gets 503 (sip-stack)
  const budget = startBudget(ctx.deps.availability);
  const route = await budget.bound(routeCall(db, ctx.credentialId, identity.calledNumber), "routing");
  const routedMs = since();
  if (!route) return refuse(invitation, 404, { ...fields, reason: "no assistant serves the number" });
  const callId = randomUUID();
  const task = { callId, organizationId: route.assistant.organizationId, assistantId: route.assistant.id };
  const reservation = reserveAgentTask(db, {
    ...task,
    credentialId: ctx.credentialId,
    phoneNumberId: route.phoneNumberId,
    transport,
    bridgeId: config.bridge.instanceId,
  });
  const reserved = await budget.bound(reservation, "reserving a slot").catch((error: unknown) => {
    // the reservation may still commit after we gave up on it: its slot is freed once the database answers
    const event = bareConcludedEvent({ callId, transport }, null, "failed");
    void closeUnanswered(db, task, { status: "failed", error: "database unavailable", event }).catch((e) =>
      log.error("call", { callId, event: "close_failed", error: describeError(e) }),
    );
    throw error;
  });
  if (!reserved) return refuse(invitation, 486, { ...fields, reason: "maxAgentTasks reached" });
  const reservedMs = since();
  // before the answer: a call_context refusal is a 603, and its variables feed the greeting
  const guard = createOutboundGuard(config.outbound);
  const prepared = await prepareInboundCall(route.assistant, transport, inviteVariables(request), guard, callId);
  if (prepared.rejected) {
    await refuse(invitation, 603, { ...fields, callId, reason: "refused by call_context" });
    await closeUnanswered(db, task, {
      status: "completed",
      error: "refused by call_context",
      event: bareConcludedEvent({ callId, transport }, null, "declined"),
    });
    return;
  }

  let call: CallHandle | null = null;
  let media: SipCallMedia | null = null;
  try {
    checkOffer(request.body, request.getHeader("Content-Type"), guard.refusalOf);
    media = await openSipCallMedia(ctx, () => call);
    ctx.media.set(invitation.id, media.rtp);
    if (invitation.state !== SessionState.Initial) throw new Error("the caller cancelled");
    // a CANCEL landing while the answer is being built must not leave the reservation waiting
    await Promise.race([invitation.accept(), untilTerminated(invitation)]);
  } catch (error) {
    void media?.rtp.close();
    ctx.media.delete(invitation.id);
    const cancelled = callerCancelled;
    if (!cancelled) await invitation.reject(refusalFor(error)).catch(() => {});
    const why = cancelled ? "caller cancelled before the answer" : `answer failed: ${describeError(error)}`;
    log.info("call", { ...fields, callId, event: cancelled ? "cancelled" : "answer_failed", error: why });
    await closeUnanswered(ctx.deps.db, task, {
      status: cancelled ? "completed" : "failed",
      error: why,
      event: bareConcludedEvent({ callId, transport }, null, cancelled ? "hangup" : "failed"),
    });
    return;
  }

  const rtp = media.rtp;
  rtp.start();
  const transportOut = sipCallerTransport(invitation, rtp, transport, ctx, identity.calledNumber);
  call = startCall(ctx.deps, route.assistant, transportOut, {
    reservedCallId: callId,
    variables: prepared.variables,
  });
  log.info("call", { ...fields, callId, event: "answered", rtpPort: rtp.port, setupMs: since(), routedMs, reservedMs });
  superviseAnsweredCall(ctx, invitation, media, call, fields);
}

/** Why the answer failed, as the caller is told: out of RTP ports is "busy here, try again", not our fault. */
function refusalFor(error: unknown) {
  if (error instanceof UnusableSdp || error instanceof RtpDestinationRefused) return { statusCode: 488 };
  if (error instanceof PortsExhausted) return { statusCode: 503, extraHeaders: [retryAfter] };
  return { statusCode: 500 };
}

/**
 * Throws when the offer is unusable or names a refused RTP destination (both 488); an INVITE without
 * SDP (late offer) is fine: we offer in the 200 OK.
 */
function checkOffer(body: string, contentType: string | undefined, refusalOf: AddressRefusal) {
  if (body.trim() && /application\/sdp/i.test(contentType ?? "")) mediaTarget(body, refusalOf);
}

function untilTerminated(invitation: Invitation): Promise<never> {
  return new Promise((_, reject) => {
    const check = (state: SessionState) => {
      if (state !== SessionState.Terminated) return;
      invitation.stateChange.removeListener(check);
      reject(new Error("the caller cancelled"));
    };
    invitation.stateChange.addListener(check);
    check(invitation.state);
  });
}

function refuse(invitation: Invitation, statusCode: number, fields: Record<string, unknown>) {
  log.info("call", { ...fields, event: "refused", status: statusCode });
  return invitation.reject({ statusCode }).catch(() => {}); // a CANCEL may have won the race
}
