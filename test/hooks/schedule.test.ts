import { describe, expect, test } from "bun:test";
import { backoffAfterAttempt, MAX_ATTEMPTS } from "../../workflows/schedule";

const MINUTE = 60_000;

describe("retry schedule at the real scale (base = 1 minute)", () => {
  test("waits 1, 2, 4, 8, 16 minutes after attempts 1 to 5", () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffAfterAttempt(n, MINUTE))).toEqual([1, 2, 4, 8, 16].map((m) => m * MINUTE));
  });

  test("keeps doubling, then is capped at 24 hours", () => {
    expect(backoffAfterAttempt(6, MINUTE)).toBe(32 * MINUTE);
    expect(backoffAfterAttempt(11, MINUTE)).toBe(1024 * MINUTE);
    // 2048 minutes would exceed the cap
    expect(backoffAfterAttempt(12, MINUTE)).toBe(24 * 60 * MINUTE);
    expect(backoffAfterAttempt(19, MINUTE)).toBe(24 * 60 * MINUTE);
  });

  test("attempt 20 is the last: no wait after it", () => {
    expect(MAX_ATTEMPTS).toBe(20);
    expect(backoffAfterAttempt(20, MINUTE)).toBeNull();
  });

  test("the whole schedule takes 2047 minutes plus 8 days", () => {
    let total = 0;
    for (let n = 1; n < MAX_ATTEMPTS; n++) total += backoffAfterAttempt(n, MINUTE)!;
    expect(total).toBe((2047 + 8 * 1440) * MINUTE);
  });
});

describe("retry schedule scaled down", () => {
  test("every wait is base x the same units", () => {
    for (let n = 1; n < MAX_ATTEMPTS; n++) {
      expect(backoffAfterAttempt(n, 7)! / 7).toBe(backoffAfterAttempt(n, MINUTE)! / MINUTE);
    }
  });

  test("rejects attempt numbers that do not exist", () => {
    expect(() => backoffAfterAttempt(0, MINUTE)).toThrow(RangeError);
    expect(() => backoffAfterAttempt(1.5, MINUTE)).toThrow(RangeError);
  });
});
