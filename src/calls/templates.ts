// Per-call text: `{{name}}` in a prompt, a greeting (later a transfer or voicemail message) becomes the
// call's variable of that name. Only a name made of letters, digits and underscores between double
// braces is a placeholder; every other brace (JSON in a prompt, a lone `{`, `{{ not a name }}`) is left
// exactly as written, so a prompt full of JSON cannot break the variables around it.

import type { CallDirection } from "../db/schema";

/** What every call's templates see besides its own variables (a given variable cannot override these). */
export type BuiltIns = {
  callerNumber: string | null;
  calledNumber: string | null;
  callId: string;
  direction: CallDirection;
  /** the instant `now`, `date` and `time` show (Unix ms) */
  now: number;
};

const placeholder = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The text with each placeholder replaced; a name without a variable renders as nothing. */
export function renderTemplate(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(placeholder, (_match, name: string) =>
    Object.hasOwn(variables, name) ? (variables[name] ?? "") : "",
  );
}

/** Every variable of a call: the given ones, then the built-ins over them. */
export function callVariables(given: Readonly<Record<string, string>>, builtIns: BuiltIns): Record<string, string> {
  const iso = new Date(builtIns.now).toISOString();
  return {
    ...given,
    caller_number: builtIns.callerNumber ?? "",
    called_number: builtIns.calledNumber ?? "",
    call_id: builtIns.callId,
    direction: builtIns.direction,
    now: `${iso.slice(0, 19)}Z`,
    date: iso.slice(0, 10),
    time: iso.slice(11, 16),
  };
}
