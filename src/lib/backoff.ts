// The one retry-wait rule: doubling from `baseMs` after each failure, capped at `maxMs`.
/** The wait before the next try after `failures` failed ones in a row (0: `baseMs`). */
export function backoffMs(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** failures);
}
