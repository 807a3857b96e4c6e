// A bridged transfer (method dial, and the fallback of a refused REFER): a second leg to the
// destination through the call's own credential (invite-leg: digest, ring time-out, CANCEL), and once
// it answers, the two legs' RTP relayed by the media (rtp-session.ts) until either side hangs up; the
// other then gets our BYE. The call's task stays open meanwhile, so it keeps its one slot (docs/transfer.md).
import type { Session } from "sip.js";
import { SessionState, UserAgent } from "sip.js";
import type { BridgedCall, TransferAttempt } from "../calls/caller-transport";
import { describeError } from "../errors";
import { log } from "../log";
import type { CallMedia } from "../media/call-media";
import type { SipCallContext } from "./answered-call";
import { destinationUri } from "./destination-uri";
import { inviteLeg } from "./invite-leg";
import { outcomeOfDial } from "./outbound-outcome";

export type Bridge = BridgedCall & {
  /** ends both legs (our side's hang-up: max duration, shutdown) */
  hangup(): void;
};

export type DialTransfer = {
  ctx: SipCallContext;
  /** the caller's dialog and RTP */
  caller: Session;
  callerMedia: CallMedia;
  to: string;
  /** the From of the second leg: our number on this call (the credential's user when we know none) */
  ourNumber: string | null;
  ringTimeoutMs: number;
  /** false for a warm transfer: the legs are joined later (`pending.join`), after the human's briefing */
  join: boolean;
  fields: Record<string, unknown>;
};

const byeIfUp = (session: Session) => {
  if (session.state === SessionState.Established) session.bye().catch(() => {});
};

/** Dials the destination and, once it answers, joins the legs; otherwise why not (busy, no answer, …). */
export async function dialTransfer(
  request: DialTransfer,
): Promise<{ attempt: TransferAttempt; bridge: Bridge | null }> {
  const { ctx, caller, callerMedia, to, ourNumber, ringTimeoutMs, join, fields } = request;
  const failed = (why: string) => ({ attempt: { ok: false, why } as const, bridge: null });
  const host = ctx.trunk.hostname.toLowerCase();
  const target = UserAgent.makeURI(destinationUri(to, ctx.trunk));
  const from = ourNumber ? UserAgent.makeURI(`sip:${ourNumber}@${host}`) : ctx.userAgent.configuration.uri;
  if (!target || !from) return failed(`${to} is not a SIP URI`);

  let onAudio: ((samples: Int16Array) => void) | null = null;
  let hangup = () => {};
  const media = await ctx
    .openMedia(
      {
        onAudio: (pcm) => onAudio?.(pcm),
        onDigit: () => {}, // digits reach the caller's side as RTP events, not as text
        onTimeout: () => hangup(),
      },
      { timeoutMs: ctx.rtpTimeoutMs },
    )
    .catch((error: unknown) => error as Error);
  if (media instanceof Error) return failed(`the second call could not be placed: ${describeError(media)}`);

  const leg = inviteLeg(ctx.userAgent, { target, from, ringTimeoutMs, media, mediaBySession: ctx.media });
  const inviter = leg.inviter;
  // the caller hanging up while it rings cancels it
  const callerGone = (state: SessionState) => {
    if (state === SessionState.Terminated) leg.cancel();
  };
  caller.stateChange.addListener(callerGone);
  const dialled = await leg.dialled.catch((error: unknown) => {
    log.warn("call", { ...fields, event: "transfer_invite_failed", error: describeError(error) });
    return { kind: "silent" } as const;
  });
  caller.stateChange.removeListener(callerGone);
  const callerLeft = caller.state !== SessionState.Established;
  if (dialled.kind !== "answered" || callerLeft) {
    if (dialled.kind === "answered") byeIfUp(inviter);
    ctx.media.delete(inviter.id);
    void media.close();
    if (callerLeft) return failed("the caller hung up");
    const outcome = outcomeOfDial(dialled, { canceled: false, ringTimedOut: leg.ringTimedOut });
    if (outcome.endedReason === "no-answer" && leg.ringTimedOut)
      return failed(`the destination did not answer within ${ringTimeoutMs / 1000} s`);
    if (dialled.kind === "rejected")
      return failed(`the destination answered ${dialled.status} (${outcome.endedReason})`);
    if (dialled.kind === "media-refused")
      return failed(`the destination's media address was refused (${dialled.refused.reason})`);
    return failed("the second call got no answer from the trunk");
  }

  media.start();
  if (join) callerMedia.relay(media);
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
  const started = performance.now();
  // whoever hangs up, the other leg gets our BYE; the bridge is over once both are down
  const up = (session: Session) => session.state === SessionState.Established;
  hangup = () => {
    byeIfUp(caller);
    byeIfUp(inviter);
    // our BYEs are out (or theirs came): the bridge is over, whenever the BYEs are answered
    if (!up(caller) && !up(inviter)) resolveEnded();
  };
  let joined = join;
  const watch = (state: SessionState) => {
    if (state !== SessionState.Terminating && state !== SessionState.Terminated) return;
    // joined, either side's end ends both; before a warm transfer joins, the caller stays with the
    // assistant when the human hangs up (the session hears it from `ended`)
    if (joined || !up(caller)) return hangup();
    byeIfUp(inviter);
    if (!up(inviter)) resolveEnded();
  };
  caller.stateChange.addListener(watch);
  inviter.stateChange.addListener(watch);
  for (const session of [caller, inviter]) watch(session.state); // one side left before we listened
  void ended.then(async () => {
    caller.stateChange.removeListener(watch);
    inviter.stateChange.removeListener(watch);
    ctx.media.delete(inviter.id);
    const stats = await media.close();
    log.info("call", {
      ...fields,
      event: "bridge_ended",
      durationMs: Math.round(performance.now() - started),
      ...stats,
    });
  });
  log.info("call", { ...fields, event: "bridged", rtpPort: media.port });
  const bridge: Bridge = {
    ended,
    onAudio: (handler) => (onAudio = handler),
    hangup: () => hangup(),
    ...(!join && {
      pending: {
        playAudio: (frame: Int16Array) => media.playAudio(frame),
        leadMs: media.leadMs,
        join: () => {
          joined = true;
          callerMedia.relay(media);
          log.info("call", { ...fields, event: "joined", afterMs: Math.round(performance.now() - started) });
        },
      },
    }),
  };
  return { attempt: { ok: true, bridged: bridge }, bridge };
}
