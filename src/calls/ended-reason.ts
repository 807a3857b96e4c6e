// Why a running call ended, in the contract's words (`endedReason`): the session's reasons are finer
// (which side, which failure) than what a client filters and retries on.
import type { EndedReason } from "../db/schema";
import type { EndReason } from "./caller-transport";

const byEndReason: Record<EndReason, EndedReason> = {
  "caller-hangup": "hangup",
  "agent-hangup": "assistant-ended",
  "max-duration": "max-duration",
  canceled: "canceled",
  transferred: "transferred",
  voicemail: "voicemail",
  "silence-timeout": "silence-timeout",
  // our side went away with the call: the same reason the reaper gives a dead bridge's calls
  "bridge-shutdown": "bridge-lost",
  "provider-disconnected": "failed",
  "voice-unavailable": "failed",
  "bridge-error": "failed",
  "media-timeout": "failed",
  "database-unavailable": "failed",
};

export function endedReasonOf(reason: EndReason): EndedReason {
  return byEndReason[reason];
}
