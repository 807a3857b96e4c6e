// How an outbound call that never connected ended: the one table from the INVITE's final response
// (or our CANCEL, or silence) to `endedReason` and the task's status (design.md, "Agent tasks gain").
// Busy, no answer, unreachable, declined and canceled are the callee's or the client's doing: the
// attempt completed. Anything else is a failure, its SIP status kept in `sipStatus`.
import type { AgentTaskStatus, EndedReason } from "../db/schema";
import type { Dialled } from "./invite-leg";

export type DialOutcome = {
  endedReason: EndedReason;
  status: Extract<AgentTaskStatus, "completed" | "failed">;
  /** the final response's status; null when none came */
  sipStatus: number | null;
};

const byStatus = new Map<number, EndedReason>([
  [486, "busy"],
  [600, "busy"],
  [408, "no-answer"],
  [480, "no-answer"],
  [404, "unreachable"],
  [410, "unreachable"],
  [484, "unreachable"],
  [604, "unreachable"],
  [603, "declined"],
]);

const outcome = (endedReason: EndedReason, sipStatus: number | null): DialOutcome => ({
  endedReason,
  status: endedReason === "failed" ? "failed" : "completed",
  sipStatus,
});

/** A final response ≥ 300 to our INVITE. */
export function outcomeOfResponse(statusCode: number): DialOutcome {
  return outcome(byStatus.get(statusCode) ?? "failed", statusCode);
}

/** We sent CANCEL at the ring time-out (the INVITE then ends 487). */
export const ringTimedOut = (sipStatus: number | null = 487) => outcome("no-answer", sipStatus);

/** Hung up through the API while it rang (CANCEL; 487), or before the INVITE went out (null). */
export const canceledBeforeAnswer = (sipStatus: number | null) => outcome("canceled", sipStatus);

/** The trunk answered nothing at all, or the call could not be placed here: a failure without a status. */
export const notPlaced = () => outcome("failed", null);

/** How a dialled leg ended unanswered: our CANCEL at the API's hang-up, silence, the ring time-out, or its refusal. */
export function outcomeOfDial(dialled: Dialled, how: { canceled: boolean; ringTimedOut: boolean }): DialOutcome {
  const status = dialled.kind === "rejected" ? dialled.status : null;
  if (how.canceled) return canceledBeforeAnswer(status ?? (dialled.kind === "silent" ? null : 487));
  // the trunk answered nothing at all (not even 100): a failure, whatever timer noticed it
  if (dialled.kind === "silent") return notPlaced();
  // the callee's media address was refused: the call was not placed, whatever it answered
  if (dialled.kind === "media-refused") return notPlaced();
  if (how.ringTimedOut) return ringTimedOut(status ?? 487);
  if (dialled.kind === "rejected") return outcomeOfResponse(dialled.status);
  return notPlaced();
}
