// One call we place, on the bridge holding the credential's lease: the INVITE to the trunk (sip.js
// answers a 401/407 with digest credentials on the same Call-ID, CSeq + 1, its `uri` the Request-URI
// as sent), From the caller id, early media taken (not recorded: the call has not started), CANCEL at
// the ring time-out, the final response mapped to endedReason (outbound-outcome). An answered call runs
// like an inbound one (calls/run-call), the callee speaking first or the greeting after 2 s of silence.
// Every way it ends closes the task and writes call_concluded; the media is closed on each path.
import { Inviter, SessionState, UserAgent, type URI } from "sip.js";
import { bareConcludedEvent } from "../calls/call-lifecycle";
import type { CallHandle } from "../calls/caller-transport";
import { loadCallAssistant } from "../calls/load-assistant";
import { startCall } from "../calls/run-call";
import type { AssistantKind, OutboundDial, Transport } from "../db/schema";
import { describeError } from "../errors";
import { log } from "../log";
import { openSipCallMedia, superviseAnsweredCall, type SipCallContext, type SipCallMedia } from "./answered-call";
import { closeUnanswered } from "./close-unanswered";
import type { CredentialAgent } from "./credential-agent";
import { canceledBeforeAnswer, notPlaced, outcomeOfResponse, ringTimedOut, type DialOutcome } from "./outbound-outcome";
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

type Dialled =
  | { kind: "answered" }
  | { kind: "rejected"; status: number; reason: string }
  | { kind: "ended" } // terminated without a final response of ours to read (CANCEL crossed, transport)
  | { kind: "silent" };

export class OutboundCall {
  readonly done: Promise<void>;
  private inviter: Inviter | null = null;
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
    const inviter = this.inviter;
    if (inviter && (inviter.state === SessionState.Initial || inviter.state === SessionState.Establishing))
      void inviter.cancel().catch(() => {});
  }

  private async run() {
    const { ctx, task } = this;
    const assistant =
      task.kind && task.assistantId ? await loadCallAssistant(ctx.deps.db, task.kind, task.assistantId) : null;
    if (!assistant) return this.close(notPlaced(), `the ${task.kind ?? "assistant"} no longer exists`, null);
    if (this.canceled) return this.close(canceledBeforeAnswer(null), "hung up before it was dialled", null);
    const target = UserAgent.makeURI(destinationUri(task.dial.to, this.agent.credential));
    const from = UserAgent.makeURI(`sip:${task.dial.from}@${this.agent.credential.hostname.toLowerCase()}`);
    if (!target || !from) return this.close(notPlaced(), "the destination is not a SIP URI", null);

    const media = await openSipCallMedia(ctx, () => this.call);
    const dialled = await this.dial(target, from, media).catch((error) => {
      log.warn("call", { ...this.fields, event: "invite_failed", error: describeError(error) });
      return { kind: "silent" } as const;
    });
    if (dialled.kind !== "answered" || this.canceled) {
      if (dialled.kind === "answered") this.inviter?.bye().catch(() => {});
      ctx.media.delete(this.inviter?.id ?? "");
      void media.rtp.close();
      const status = dialled.kind === "rejected" ? dialled.status : null;
      const error = dialled.kind === "rejected" ? `${dialled.status} ${dialled.reason}` : null;
      return this.close(this.outcome(dialled, status), error, status);
    }
    const inviter = this.inviter!;
    media.rtp.start();
    this.call = startCall(ctx.deps, assistant, sipCallerTransport(inviter, media.rtp, task.transport, ctx.trunk), {
      reservedCallId: task.callId,
      direction: "outbound",
      variables: task.variables,
      maxCallMs: task.dial.maxDurationMs,
      greetAfterSilenceMs,
      voicemail: task.dial.voicemail,
      sipStatus: 200,
    });
    log.info("call", { ...this.fields, event: "answered", rtpPort: media.rtp.port });
    superviseAnsweredCall(ctx, inviter, media, this.call, this.fields);
    await this.call.done;
  }

  private ringTimedOut = false;

  private outcome(dialled: Dialled, status: number | null): DialOutcome {
    if (this.canceled) return canceledBeforeAnswer(status ?? (dialled.kind === "silent" ? null : 487));
    // the trunk answered nothing at all (not even 100): a failure, whatever timer noticed it
    if (dialled.kind === "silent") return notPlaced();
    if (this.ringTimedOut) return ringTimedOut(status ?? 487);
    if (dialled.kind === "rejected") return outcomeOfResponse(dialled.status);
    return notPlaced();
  }

  /** Sends the INVITE and waits for the answer, a final refusal, our CANCEL's end, or nothing. */
  private dial(target: URI, from: URI, media: SipCallMedia): Promise<Dialled> {
    const inviter = new Inviter(this.agent.userAgent, target, { earlyMedia: true, params: { fromUri: from } });
    this.inviter = inviter;
    this.ctx.media.set(inviter.id, media.rtp);
    let provisional = false;
    return new Promise<Dialled>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ringTimedOut = true;
        // nothing came back: no transaction to cancel, the call is given up now
        if (!provisional) return resolve({ kind: "silent" });
        void inviter.cancel().catch(() => {});
      }, this.task.dial.ringTimeoutMs);
      const settle = (result: Dialled) => {
        clearTimeout(timer);
        resolve(result); // the first result wins
      };
      inviter.stateChange.addListener((state) => {
        if (state === SessionState.Established) settle({ kind: "answered" });
        // sip.js terminates the session before it hands the final response to onReject: let that come first
        if (state === SessionState.Terminated) setTimeout(() => settle({ kind: "ended" }), 0);
      });
      inviter
        .invite({
          requestDelegate: {
            onTrying: () => (provisional = true),
            onProgress: (response) => {
              provisional = true;
              log.info("call", { ...this.fields, event: "ringing", status: response.message.statusCode });
            },
            onReject: (response) =>
              settle({
                kind: "rejected",
                status: response.message.statusCode ?? 0,
                reason: response.message.reasonPhrase ?? "",
              }),
          },
        })
        .then(() => log.info("call", { ...this.fields, event: "dialing", to: this.task.transport.calledNumber }))
        .catch((error) => {
          clearTimeout(timer);
          reject(error);
        });
    });
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
