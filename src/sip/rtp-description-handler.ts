// sip.js's SessionDescriptionHandler for plain RTP: offers and answers come from sdp.ts, and every
// negotiation (the first one, refresh and hold re-INVITEs) re-targets the call's RTP session. An SDP
// naming an RTP destination the outbound guard refuses is never applied, and its session is ended.
import { Inviter, SessionState, type BodyAndContentType, type Session, type SessionDescriptionHandler } from "sip.js";
import { SessionDialog } from "sip.js/lib/core/dialogs/session-dialog.js";
import { TransactionState } from "sip.js/lib/core/transactions/transaction-state.js";
import type { CallMedia } from "../media/call-media";
import type { AddressRefusal } from "../net/outbound-guard";
import { RtpDestinationRefused, mediaTarget } from "./media-target";
import { buildAnswer, buildOffer, type Negotiated } from "./sdp";

export class RtpDescriptionHandler implements SessionDescriptionHandler {
  private negotiated: Negotiated | null = null;
  // an offer came in and awaits our answer / we sent an offer and await theirs
  private answerDue = false;
  private offerSent = false;
  private readonly sessionId = String(Date.now());
  private version = 1;
  private lastBody = "";

  constructor(
    private readonly media: CallMedia,
    private readonly host: string,
    private readonly refusalOf: AddressRefusal,
    /** called before the refusal is thrown to sip.js (which answers 488, or ACKs and BYEs a 2xx) */
    private readonly onRefused: (error: RtpDestinationRefused) => void,
  ) {}

  async setDescription(sdp: string): Promise<void> {
    let negotiated: Negotiated;
    try {
      negotiated = mediaTarget(sdp, this.refusalOf);
    } catch (error) {
      if (error instanceof RtpDestinationRefused) this.onRefused(error);
      throw error;
    }
    this.negotiated = negotiated;
    await this.media.configure(negotiated);
    if (this.offerSent) this.offerSent = false;
    else this.answerDue = true;
  }

  async getDescription(): Promise<BodyAndContentType> {
    const answering = this.answerDue && this.negotiated !== null;
    const build = (version: number) => {
      const origin = { sessionId: this.sessionId, version, host: this.host, port: this.media.port };
      return answering ? buildAnswer(origin, this.negotiated!) : buildOffer(origin);
    };
    // the o= version changes only when the session does (RFC 3264 §8), so refreshes repeat it
    let body = build(this.version);
    if (this.lastBody && body !== this.lastBody) body = build(++this.version);
    this.lastBody = body;
    this.answerDue = false;
    this.offerSent = !answering;
    return { body, contentType: "application/sdp" };
  }

  hasDescription(contentType: string): boolean {
    return contentType === "application/sdp";
  }

  async rollbackDescription(): Promise<void> {
    this.answerDue = false;
    this.offerSent = false;
  }

  sendDtmf(): boolean {
    return false; // we never send digits
  }

  close(): void {
    // the RTP session belongs to the call, which closes it when the call ends
  }
}

const refusals = new WeakMap<Session, RtpDestinationRefused>();

/** Why the session's far end was refused its RTP destination (the session ends for it), or null. */
export const mediaRefusal = (session: Session): RtpDestinationRefused | null => refusals.get(session) ?? null;

/**
 * Ends a session whose far end named a refused RTP destination. sip.js itself ACKs and BYEs a refused
 * 2xx, BYEs after a refused answer in an ACK and rejects a refused INVITE; but it drops a refused early
 * answer (183) without CANCEL, and answers a refused re-INVITE 488 with the call going on.
 */
export function endRefusedSession(session: Session, error: RtpDestinationRefused) {
  refusals.set(session, error);
  // still ringing: our CANCEL (sip.js ACKs and BYEs a 2xx that crosses it)
  if (session instanceof Inviter && session.state === SessionState.Establishing) {
    void session.cancel().catch(() => {});
    return;
  }
  const bye = () => {
    if (session.state === SessionState.Established) session.bye().catch(() => {});
  };
  // a re-INVITE: our BYE once the caller has ACKed our 488 (or its transaction ended without one).
  // Sent at once, it raced the 488: a proxy's workers may pass two datagrams on in either order, and
  // a caller that gets the BYE while its re-INVITE is unanswered fails the call (SIPp through Kamailio).
  const dialog = session.dialog;
  const transaction = dialog instanceof SessionDialog ? dialog.reinviteUserAgentServer?.transaction : undefined;
  if (!transaction) {
    setTimeout(bye, 0);
    return;
  }
  const answered = () => {
    if (transaction.state !== TransactionState.Confirmed && transaction.state !== TransactionState.Terminated) return;
    transaction.removeStateChangeListener(answered);
    bye();
  };
  transaction.addStateChangeListener(answered);
}
