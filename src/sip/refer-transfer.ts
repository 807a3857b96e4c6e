// Blind transfer by REFER in the caller's dialog (RFC 3515): Refer-To the destination, Referred-By us
// (sip.js adds it), then the implicit subscription's NOTIFYs (message/sipfrag) until the final one. We
// keep our leg until then, so a transfer that fails can come back to the assistant.
import type { Session } from "sip.js";
import { SessionState, UserAgent } from "sip.js";
import { outcomeOfResponse } from "./outbound-outcome";

export type ReferResult =
  /** the destination answered: the caller is with it */
  | { kind: "transferred" }
  /** the destination refused (final sipfrag ≥ 300): busy, no answer, … as for an outbound call */
  | { kind: "failed"; why: string }
  /** the caller's side refused the REFER or never said how it ended: fall back to another way */
  | { kind: "refused"; why: string }
  /** the caller hung up meanwhile */
  | { kind: "ended" };

// a REFER nobody answers is given up on like any non-INVITE request (RFC 3261 timer F)
const referAnswerMs = 32_000;

/** The status line of a message/sipfrag body ("SIP/2.0 180 Ringing"), or null. */
export function sipfragStatus(body: string): number | null {
  const match = /^\s*SIP\/2\.0\s+(\d{3})\b/.exec(body);
  return match ? Number(match[1]) : null;
}

/**
 * Sends the REFER and settles once its outcome is known: the final NOTIFY, a refusal of the REFER, no
 * final NOTIFY within `ringTimeoutMs` of the 202 (a 100 Trying does not stop the clock), or a hang-up.
 */
export function referTransfer(session: Session, referTo: string, ringTimeoutMs: number): Promise<ReferResult> {
  const target = UserAgent.makeURI(referTo);
  if (!target) return Promise.resolve({ kind: "refused", why: `${referTo} is not a SIP URI` });
  return new Promise((resolve) => {
    let timer = setTimeout(() => settle({ kind: "refused", why: "the REFER got no answer" }), referAnswerMs);
    const onState = (state: SessionState) => {
      if (state === SessionState.Terminated) settle({ kind: "ended" });
    };
    const settle = (result: ReferResult) => {
      clearTimeout(timer);
      session.stateChange.removeListener(onState);
      resolve(result);
    };
    session.stateChange.addListener(onState);
    session
      .refer(target, {
        requestDelegate: {
          onAccept: () => {
            clearTimeout(timer);
            timer = setTimeout(
              () => settle({ kind: "refused", why: `no final NOTIFY within ${ringTimeoutMs / 1000} s` }),
              ringTimeoutMs,
            );
          },
          onReject: ({ message }) =>
            settle({ kind: "refused", why: `the REFER was refused (${message.statusCode} ${message.reasonPhrase})` }),
        },
        onNotify: (notification) => {
          void notification.accept().catch(() => {});
          const status = sipfragStatus(notification.request.body);
          if (status === null || status < 200) return;
          if (status < 300) return settle({ kind: "transferred" });
          const { endedReason } = outcomeOfResponse(status);
          settle({ kind: "failed", why: `the destination answered ${status} (${endedReason})` });
        },
      })
      .catch((error: Error) => settle({ kind: "refused", why: `the REFER could not be sent: ${error.message}` }));
  });
}
