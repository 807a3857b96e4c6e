// Where an SDP body asks us to send RTP, checked before any of it is used: an audio stream in a codec
// of ours (else 488), at an address the outbound guard allows. A callee's, a transferee's or a
// caller's SDP is the far end's choice, so its c= address is a destination like any other a tenant
// reaches us with (docs/security.md); OUTBOUND_ALLOW_CIDRS opens private ranges for media as for
// signalling. The hold address (c=0.0.0.0) is exempt: nothing is ever sent there.
import type { AddressRefusal } from "../net/outbound-guard";
import { holdAddress, negotiate, parseSdp, type Negotiated } from "./sdp";

export class UnusableSdp extends Error {
  constructor() {
    super("no audio stream with PCMU or PCMA in the SDP");
  }
}

export class RtpDestinationRefused extends Error {
  constructor(readonly reason: string) {
    super(`RTP destination refused: ${reason}`);
  }
}

/** What the SDP settles for our RTP; throws UnusableSdp or RtpDestinationRefused. */
export function mediaTarget(sdp: string, refusalOf: AddressRefusal): Negotiated {
  const offer = parseSdp(sdp);
  const negotiated = offer && negotiate(offer);
  if (!negotiated) throw new UnusableSdp();
  const why = negotiated.address === holdAddress ? null : refusalOf(negotiated.address);
  if (why) throw new RtpDestinationRefused(why);
  return negotiated;
}
