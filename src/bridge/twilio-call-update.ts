// Transfer of a Twilio Media Streams call: Twilio's call-update REST API replaces the call's TwiML
// (our <Connect><Stream>) with a <Dial> to the destination, which ends the stream. The endpoint and
// account come from the environment only; the auth token never reaches a log line.
import type { TransferAttempt } from "../calls/caller-transport";

export type TwilioApi = { apiUrl: string; accountSid: string; authToken: string };

// Twilio answers a call update within a second or two; the caller is waiting on hold meanwhile
const updateTimeoutMs = 5_000;

const escapeXml = (text: string) =>
  text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);

/** The TwiML that dials the destination: <Number> for E.164, <Sip> for a sip: URI. */
export function dialTwiml(to: string, ringTimeoutMs: number): string {
  const noun = /^sip:/i.test(to) ? `<Sip>${escapeXml(to)}</Sip>` : `<Number>${escapeXml(to)}</Number>`;
  return `<Response><Dial timeout="${Math.round(ringTimeoutMs / 1000)}">${noun}</Dial></Response>`;
}

export async function redirectTwilioCall(
  api: TwilioApi,
  callSid: string,
  to: string,
  ringTimeoutMs: number,
): Promise<TransferAttempt> {
  const url = `${api.apiUrl.replace(/\/$/, "")}/2010-04-01/Accounts/${encodeURIComponent(api.accountSid)}/Calls/${encodeURIComponent(callSid)}.json`;
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${api.accountSid}:${api.authToken}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ Twiml: dialTwiml(to, ringTimeoutMs) }),
      signal: AbortSignal.timeout(updateTimeoutMs),
      redirect: "error",
    });
    await res.body?.cancel();
    return res.ok ? { ok: true } : { ok: false, why: `Twilio refused the call update (HTTP ${res.status})` };
  } catch (error) {
    return { ok: false, why: `Twilio could not be reached: ${(error as Error).name}` };
  }
}
