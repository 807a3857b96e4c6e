// What an inbound and an outbound SIP call share: the RTP session that feeds the call (audio, digits,
// RTP time-out), and, once the call is answered, its supervision: the peer's BYE ends it, and when it
// has ended its RTP closes and its quality is recorded.
import type { Session, UserAgent } from "sip.js";
import { SessionState } from "sip.js";
import type { CallHandle } from "../calls/caller-transport";
import type { CallDeps } from "../calls/run-call";
import { log } from "../log";
import type { CallMedia, OpenMedia } from "../media/call-media";
import { DigitCollector } from "../media/dtmf";
import { recordCredentialCall, recordRtpCall } from "../metrics/metrics";
import { recordCallerQuality } from "./caller-quality";
import { mediaRefusal } from "./rtp-description-handler";

export type SipCallContext = {
  deps: CallDeps;
  /** RTP in this event loop or on the media thread */
  openMedia: OpenMedia;
  credentialId: string;
  /** the credential's trunk: a transfer to a number is referred or dialled there */
  trunk: { hostname: string; port: number };
  /** the credential's user agent: a bridged transfer's second leg goes out through it */
  userAgent: UserAgent;
  rtpTimeoutMs: number;
  /** RTP sessions by sip.js session id, for the description handler factory. */
  media: Map<string, CallMedia>;
  track(call: CallHandle): void;
};

export type SipCallMedia = { rtp: CallMedia; digits: DigitCollector };

/** The call's RTP, feeding whatever call `current` returns (none until it is answered). */
export async function openSipCallMedia(ctx: SipCallContext, current: () => CallHandle | null): Promise<SipCallMedia> {
  const digits = new DigitCollector((d) => current()?.callerDtmf(d));
  const rtp = await ctx.openMedia(
    {
      onAudio: (pcm, ulaw) => current()?.callerAudio(pcm, ulaw),
      onDigit: (digit) => digits.push(digit),
      onTimeout: () => current()?.end("media-timeout"),
    },
    { timeoutMs: ctx.rtpTimeoutMs },
  );
  return { rtp, digits };
}

/** An answered call: its end follows the session's, and its media is closed and measured after it. */
export function superviseAnsweredCall(
  ctx: SipCallContext,
  session: Session,
  { rtp, digits }: SipCallMedia,
  call: CallHandle,
  fields: Record<string, unknown>,
) {
  ctx.track(call);
  recordCredentialCall(ctx.credentialId, call.done);
  // their BYE, or ours coming back; or ours because their SDP named a refused RTP destination
  const ended = () => {
    const refused = mediaRefusal(session);
    if (refused) call.end("bridge-error", refused.message);
    else call.callerHangup();
  };
  session.stateChange.addListener((state) => {
    if (state === SessionState.Terminated) ended();
  });
  if ((session.state as SessionState) === SessionState.Terminated) ended(); // ended before we listened
  void call.done.finally(async () => {
    digits.flush();
    const caller = rtp.callerQuality;
    ctx.media.delete(session.id);
    if (caller) void recordCallerQuality(ctx.deps.db, call.callId, caller);
    const stats = await rtp.close();
    recordRtpCall(stats);
    // our frames skipped after stalls are loss the caller heard, next to theirs (and what the
    // caller's RTCP said it saw: jitter, loss, round trip)
    log.info("call", { ...fields, callId: call.callId, event: "media", ...stats, caller });
  });
}
