// sip.js's SessionDescriptionHandler for plain RTP: offers and answers come from sdp.ts, and every
// negotiation (the first one, refresh and hold re-INVITEs) re-targets the call's RTP session.
import type { BodyAndContentType, SessionDescriptionHandler } from "sip.js";
import type { CallMedia } from "../media/call-media";
import { buildAnswer, buildOffer, negotiate, parseSdp, type Negotiated } from "./sdp";

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
  ) {}

  async setDescription(sdp: string): Promise<void> {
    const offer = parseSdp(sdp);
    const negotiated = offer && negotiate(offer);
    if (!negotiated) throw new Error("no audio stream with PCMU or PCMA in the SDP");
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
