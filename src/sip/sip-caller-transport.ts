// The CallerTransport of a SIP call: agent audio into the paced RTP sender at 8 kHz (providers talk
// 8 kHz mu-law with these calls; the voice engine resamples only for a strategy that asks for another
// output rate), and hang-up as our BYE.
import type { Session } from "sip.js";
import { SessionState } from "sip.js";
import type { CallerTransport } from "../calls/caller-transport";
import type { Transport } from "../db/schema";
import { log } from "../log";
import type { CallMedia } from "../media/call-media";

export function sipCallerTransport(session: Session, media: CallMedia, descriptor: Transport): CallerTransport {
  return {
    descriptor,
    sampleRate: 8000,
    leadMs: media.leadMs,
    playAudio: (frame) => media.playAudio(frame),
    clearAudio: () => media.clearAudio(),
    notify: () => {}, // a phone line carries audio only
    mediaQuality: () => media.callerQuality,
    hangup() {
      if (session.state !== SessionState.Established) return; // the caller already hung up
      session.bye().catch((error: Error) => log.warn("sip bye failed", { error: error.message }));
    },
  };
}
