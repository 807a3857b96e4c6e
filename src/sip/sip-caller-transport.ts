// The CallerTransport of a SIP call: agent audio into the paced RTP sender at 8 kHz (providers talk
// 8 kHz mu-law with these calls; the voice engine resamples only for a strategy that asks for another
// output rate), hang-up as our BYE, and a transfer as a REFER in the caller's dialog.
import type { Session } from "sip.js";
import { SessionState } from "sip.js";
import type { CallerTransport, TransferAttempt, TransferRequest } from "../calls/caller-transport";
import type { Transport } from "../db/schema";
import { log } from "../log";
import type { CallMedia } from "../media/call-media";
import { destinationUri } from "./destination-uri";
import { referTransfer } from "./refer-transfer";

export function sipCallerTransport(
  session: Session,
  media: CallMedia,
  descriptor: Transport,
  trunk: { hostname: string; port: number },
): CallerTransport {
  return {
    descriptor,
    sampleRate: 8000,
    leadMs: media.leadMs,
    playAudio: (frame) => media.playAudio(frame),
    clearAudio: () => media.clearAudio(),
    notify: () => {}, // a phone line carries audio only
    mediaQuality: () => media.callerQuality,
    transfer: (request) => transferSipCall(session, trunk, request),
    hangup() {
      if (session.state !== SessionState.Established) return; // the caller already hung up
      session.bye().catch((error: Error) => log.warn("sip bye failed", { error: error.message }));
    },
  };
}

async function transferSipCall(
  session: Session,
  trunk: { hostname: string; port: number },
  { to, ringTimeoutMs, method }: TransferRequest,
): Promise<TransferAttempt> {
  // the bridged second leg (method dial, and the fallback of a refused REFER) is not built yet: docs/transfer.md
  if (method === "dial") return { ok: false, why: "transfer by a second call (method dial) is not available yet" };
  const result = await referTransfer(session, destinationUri(to, trunk), ringTimeoutMs);
  switch (result.kind) {
    case "transferred":
      return { ok: true };
    case "ended":
      return { ok: false, why: "the caller hung up" };
    default:
      return { ok: false, why: result.why };
  }
}
