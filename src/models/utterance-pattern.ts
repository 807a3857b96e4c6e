// A said/notSaid criterion's `pattern`, in RE2 syntax: RE2 (re2js, its JavaScript port) matches in
// time linear in the text, so no tenant's pattern can hold the worker's event loop (a backtracking
// `new RegExp("(a+)+$")` spends minutes on 40 a's and a b; heartbeats and hook deliveries stop).
// RE2 has no backreferences or lookaround: a pattern using them is refused when it is written.
import { RE2JS } from "re2js";

export type CompiledPattern = { ok: true; pattern: { test(text: string): boolean } } | { ok: false; message: string };

/** The pattern compiled case-insensitive, or why RE2 refuses it. */
export function compileUtterancePattern(pattern: string): CompiledPattern {
  try {
    return { ok: true, pattern: RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE) };
  } catch (error) {
    return {
      ok: false,
      message: `not a regular expression RE2 accepts (no backreferences or lookaround): ${(error as Error).message}`,
    };
  }
}
