// One INVITE we send through a credential's user agent, up to its answer: an outbound call's, and a
// bridged transfer's second leg. sip.js answers a 401/407 with digest credentials on the same Call-ID,
// CSeq + 1 (its `uri` the Request-URI as sent); early media is taken; at the ring time-out we CANCEL
// (and give up at once when nothing at all came back; the CANCEL then goes when a provisional does, a
// 2xx is ACKed and ended with BYE). The result maps to an outcome in outbound-outcome.
import { Inviter, SessionState, type URI, type UserAgent } from "sip.js";
import type { CallMedia } from "../media/call-media";
import type { RtpDestinationRefused } from "./media-target";
import { mediaRefusal } from "./rtp-description-handler";

export type Dialled =
  | { kind: "answered" }
  | { kind: "rejected"; status: number; reason: string }
  | { kind: "ended" } // terminated without a final response of ours to read (CANCEL crossed, transport)
  /** the callee's SDP named an RTP destination the outbound guard refuses: cancelled, or ACKed and BYEd */
  | { kind: "media-refused"; refused: RtpDestinationRefused }
  | { kind: "silent" };

export type InviteLeg = {
  inviter: Inviter;
  /** settles with the first of: the answer, a final refusal, the end after our CANCEL, nothing */
  dialled: Promise<Dialled>;
  /** whether the ring time-out fired (the outcome is then no-answer) */
  readonly ringTimedOut: boolean;
  /** CANCEL while it rings (a no-op once answered or ended) */
  cancel(): void;
};

export type InviteLegOptions = {
  target: URI;
  from: URI;
  ringTimeoutMs: number;
  /** the leg's RTP: registered under the session id for the description handler before the INVITE goes */
  media: CallMedia;
  mediaBySession: Map<string, CallMedia>;
  onRinging?(status: number | undefined): void;
  /** the INVITE went out */
  onSent?(): void;
};

/** Sends the INVITE; `dialled` rejects only when sip.js could not send it at all. */
export function inviteLeg(userAgent: UserAgent, options: InviteLegOptions): InviteLeg {
  const inviter = new Inviter(userAgent, options.target, { earlyMedia: true, params: { fromUri: options.from } });
  options.mediaBySession.set(inviter.id, options.media);
  let provisional = false;
  const leg = {
    inviter,
    ringTimedOut: false,
    cancel() {
      if (inviter.state === SessionState.Initial || inviter.state === SessionState.Establishing)
        void inviter.cancel().catch(() => {});
    },
  } as InviteLeg & { ringTimedOut: boolean };
  leg.dialled = new Promise<Dialled>((resolve, reject) => {
    const timer = setTimeout(() => {
      leg.ringTimedOut = true;
      // sip.js holds the CANCEL until a provisional response comes (none may go before one, RFC 3261
      // §9.1), and ACKs and BYEs a 2xx to a cancelled INVITE (§15): a callee that answers after we
      // gave up is neither left ringing nor in a dialog nobody owns
      leg.cancel();
      // nothing came back: the call is given up now, whatever comes later
      if (!provisional) resolve({ kind: "silent" });
    }, options.ringTimeoutMs);
    const settle = (result: Dialled) => {
      clearTimeout(timer);
      resolve(result); // the first result wins
    };
    inviter.stateChange.addListener((state) => {
      if (state === SessionState.Established) settle({ kind: "answered" });
      if (state !== SessionState.Terminated) return;
      // ended for its SDP: that is why, whatever final response (487 to our CANCEL) comes after
      const refused = mediaRefusal(inviter);
      if (refused) return settle({ kind: "media-refused", refused });
      // sip.js terminates the session before it hands the final response to onReject: let that come first
      setTimeout(() => settle({ kind: "ended" }), 0);
    });
    inviter
      .invite({
        requestDelegate: {
          onTrying: () => (provisional = true),
          onProgress: (response) => {
            provisional = true;
            options.onRinging?.(response.message.statusCode);
          },
          onReject: (response) =>
            settle({
              kind: "rejected",
              status: response.message.statusCode ?? 0,
              reason: response.message.reasonPhrase ?? "",
            }),
        },
      })
      .then(() => options.onSent?.())
      .catch((error) => {
        clearTimeout(timer);
        reject(error);
      });
  });
  return leg;
}
