// The spec's retry schedule as a pure function, shared by the workflow and the tests.
// Waits after attempts 1..5 are 1, 2, 4, 8, 16 base units, then doubling, capped at 1440 units (24 h
// when the base is one minute). Attempt 20 is the last one.
export const MAX_ATTEMPTS = 20;
export const CAP_UNITS = 1440;

/** Milliseconds to wait after failed attempt `attempt` (1-based); null after the last attempt. */
export function backoffAfterAttempt(attempt: number, baseMs: number): number | null {
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`attempt must be a positive integer, got ${attempt}`);
  if (attempt >= MAX_ATTEMPTS) return null;
  // 2^19 still fits exactly in a double, so no overflow before the cap applies
  return Math.min(2 ** (attempt - 1), CAP_UNITS) * baseMs;
}
