// The values of a campaign contact's status column, in a module of its own (no imports) so that the
// console's browser bundle takes them from here too (src/console/web/campaigns.ts).

/** A contact's state: pending → dialing (call offered) → in-progress (answered) → an outcome. */
/** A contact's state: pending → dialing (call offered) → in-progress (answered) → an outcome. */
export const contactStatuses = [
  "pending",
  "dialing",
  "in-progress",
  "completed",
  "failed",
  "busy",
  "no-answer",
  "voicemail",
  "canceled",
] as const;
export type ContactStatus = (typeof contactStatuses)[number];
