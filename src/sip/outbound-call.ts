// One call we place, on the bridge holding the credential's lease: the INVITE to the trunk (invite-leg:
// digest, early media not recorded since the call has not started, CANCEL at the ring time-out), From
// the caller id, the final response mapped to endedReason (outbound-outcome). An answered call runs
// like an inbound one (calls/run-call), the callee speaking first or the greeting after 2 s of silence.
// Every way it ends closes the task and writes call_concluded; the media is closed on each path.
import { UserAgent } from "sip.js";
import { bareConcludedEvent } from "../calls/call-lifecycle";
import type { CallHandle } from "../calls/caller-transport";
import { loadCallAssistant } from "../calls/load-assistant";
import { startCall } from "../calls/run-call";
import type { AssistantKind, OutboundDial, Transport } from "../db/schema";
import { describeError } from "../errors";
import { log } from "../log";
import { openSipCallMedia, superviseAnsweredCall, type SipCallContext } from "./answered-call";
import { closeUnanswered } from "./close-unanswered";
import type { CredentialAgent } from "./credential-agent";
import { inviteLeg, type InviteLeg } from "./invite-leg";
import { canceledBeforeAnswer, notPlaced, outcomeOfDial, type DialOutcome } from "./outbound-outcome";
import { destinationUri } from "./destination-uri";
import { sipCallerTransport } from "./sip-caller-transport";

export type OutboundTask = {
  callId: string;
  organizationId: string;
  assistantId: string | null;
  kind: AssistantKind | null;
  credentialId: string;
  transport: Transport;
  dial: OutboundDial;
  variables: Record<string, string>;
};

// the opening of design.md: the callee speaks first, or the assistant greets after this much silence
const greetAfterSilenceMs = 2000;

export class OutboundCall {
  readonly done: Promise<void>;
  private leg: InviteLeg | null = null;
  private call: CallHandle | null = null;
  private canceled = false;
  private readonly fields: Record<string, unknown>;

  constructor(
    private readonly ctx: SipCallContext,
    private readonly agent: CredentialAgent,
    private readonly task: OutboundTask,
  ) {
    this.fields = { callId: task.callId, credentialId: task.credentialId, direction: "outbound" };
    this.done = this.run().catch((error) => {
      log.error("call", { ...this.fields, event: "dial_failed", error: describeError(error) });
      return this.close(notPlaced(), `the call could not be placed: ${describeError(error)}`, null);
    });
  }

  /** Hung up through the API: CANCEL while it rings, BYE once answered. */
  hangup() {
    this.canceled = true;
    if (this.call) return this.call.end("canceled");
    this.leg?.cancel();
  }

  private async run() {
    const { ctx, task } = this;
    const target = UserAgent.makeURI(destinationUri(task.dial.to, this.agent.credential));
    const from = UserAgent.makeURI(`sip:${task.dial.from}@${this.agent.credential.hostname.toLowerCase()}`);
    if (!target || !from) return this.close(notPlaced(), "the destination is not a SIP URI", null);
    // the assistant and the RTP port side by side: the INVITE waits for the slower of the two, not both
    const [found, opened] = await Promise.allSettled([
      task.kind && task.assistantId ? loadCallAssistant(ctx.deps.db, task.kind, task.assistantId) : null,
      openSipCallMedia(ctx, () => this.call),
    ]);
    if (opened.status === "rejected") throw opened.reason;
    const media = opened.value;
    if (found.status === "rejected" || !found.value || this.canceled) {
      void media.rtp.close();
      if (found.status === "rejected") throw found.reason;
      if (!found.value) return this.close(notPlaced(), `the ${task.kind ?? "assistant"} no longer exists`, null);
      return this.close(canceledBeforeAnswer(null), "hung up before it was dialled", null);
    }
    const assistant = found.value;
    const leg = inviteLeg(this.agent.userAgent, {
      target,
      from,
      ringTimeoutMs: task.dial.ringTimeoutMs,
      media: media.rtp,
      mediaBySession: ctx.media,
      onRinging: (status) => log.info("call", { ...this.fields, event: "ringing", status }),
      onSent: () => log.info("call", { ...this.fields, event: "dialing", to: task.transport.calledNumber }),
    });
    this.leg = leg;
    const dialled = await leg.dialled.catch((error) => {
      log.warn("call", { ...this.fields, event: "invite_failed", error: describeError(error) });
      return { kind: "silent" } as const;
    });
    if (dialled.kind !== "answered" || this.canceled) {
      if (dialled.kind === "answered") leg.inviter.bye().catch(() => {});
      ctx.media.delete(leg.inviter.id);
      void media.rtp.close();
      const status = dialled.kind === "rejected" ? dialled.status : null;
      const error =
        dialled.kind === "rejected"
          ? `${dialled.status} ${dialled.reason}`
          : dialled.kind === "media-refused"
            ? dialled.refused.message
            : null;
      const outcome = outcomeOfDial(dialled, { canceled: this.canceled, ringTimedOut: leg.ringTimedOut });
      return this.close(outcome, error, status);
    }
    const inviter = leg.inviter;
    media.rtp.start();
    this.call = startCall(
      ctx.deps,
      assistant,
      sipCallerTransport(inviter, media.rtp, task.transport, ctx, task.dial.from),
      {
        reservedCallId: task.callId,
        direction: "outbound",
        variables: task.variables,
        maxCallMs: task.dial.maxDurationMs,
        greetAfterSilenceMs,
        voicemail: task.dial.voicemail,
        sipStatus: 200,
      },
    );
    log.info("call", { ...this.fields, event: "answered", rtpPort: media.rtp.port });
    superviseAnsweredCall(ctx, inviter, media, this.call, this.fields);
    await this.call.done;
  }

  private async close(outcome: DialOutcome, error: string | null, sipStatus: number | null) {
    const { task } = this;
    const event = bareConcludedEvent({ ...task, direction: "outbound" }, null, outcome.endedReason);
    await closeUnanswered(
      this.ctx.deps.db,
      { callId: task.callId, organizationId: task.organizationId, assistantId: task.assistantId },
      { status: outcome.status, error, sipStatus: outcome.sipStatus ?? sipStatus, event },
    );
    log.info("call", {
      ...this.fields,
      event: "not_answered",
      endedReason: outcome.endedReason,
      sipStatus: outcome.sipStatus,
    });
  }
}
