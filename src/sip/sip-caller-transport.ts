// The CallerTransport of a SIP call: agent audio into the paced RTP sender at 8 kHz (providers talk
// 8 kHz mu-law with these calls; the voice engine resamples only for a strategy that asks for another
// output rate), hang-up as our BYE, and a transfer: a REFER in the caller's dialog, or a second leg we
// bridge (method dial, a warm transfer, and when the REFER is refused), which our hang-up then ends too.
import type { Session } from "sip.js";
import { SessionState } from "sip.js";
import type { CallerTransport, TransferAttempt, TransferRequest } from "../calls/caller-transport";
import type { Transport } from "../db/schema";
import { log } from "../log";
import type { CallMedia } from "../media/call-media";
import type { SipCallContext } from "./answered-call";
import { dialTransfer, type Bridge } from "./bridged-transfer";
import { destinationUri } from "./destination-uri";
import { referTransfer } from "./refer-transfer";

/** `ourNumber`: this side's number on the call (the From of a transfer's second leg). */
export function sipCallerTransport(
  session: Session,
  media: CallMedia,
  descriptor: Transport,
  ctx: SipCallContext,
  ourNumber: string | null,
): CallerTransport {
  let bridge: Bridge | null = null;
  let hungUp = false;

  async function transfer({ to, ringTimeoutMs, method, mode }: TransferRequest): Promise<TransferAttempt> {
    const dial = async () => {
      const dialled = await dialTransfer({
        ctx,
        caller: session,
        callerMedia: media,
        to,
        ourNumber,
        ringTimeoutMs,
        join: mode !== "warm",
        fields: { sipCallId: session.dialog?.callId, to },
      });
      bridge = dialled.bridge;
      if (hungUp) bridge?.hangup(); // the call ended while the second leg rang
      return dialled.attempt;
    };
    // warm: only a leg of ours lets the assistant brief the human before the caller joins
    if (method === "dial" || mode === "warm") return dial();
    const result = await referTransfer(session, destinationUri(to, ctx.trunk), ringTimeoutMs);
    switch (result.kind) {
      case "transferred":
        return { ok: true };
      case "ended":
        return { ok: false, why: "the caller hung up" };
      case "refused": {
        // the caller's side will not transfer: we place the second leg ourselves (design.md)
        log.info("call", { sipCallId: session.dialog?.callId, event: "refer_fallback", why: result.why });
        const attempt = await dial();
        return attempt.ok ? attempt : { ok: false, why: `${result.why}, and then ${attempt.why}` };
      }
      default:
        return { ok: false, why: result.why };
    }
  }

  return {
    descriptor,
    sampleRate: 8000,
    leadMs: media.leadMs,
    playAudio: (frame) => media.playAudio(frame),
    clearAudio: () => media.clearAudio(),
    pauseAudio: () => media.pauseAudio(),
    resumeAudio: () => media.resumeAudio(),
    notify: () => {}, // a phone line carries audio only
    mediaQuality: () => media.callerQuality,
    transfer,
    hangup() {
      hungUp = true;
      bridge?.hangup();
      if (session.state !== SessionState.Established) return; // the caller already hung up
      session.bye().catch((error: Error) => log.warn("sip bye failed", { error: error.message }));
    },
  };
}
