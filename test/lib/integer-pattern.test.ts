// integerPattern matches exactly the numbers of its range, written without leading zeros.
import { expect, test } from "bun:test";
import { integerPattern } from "../../src/lib/integer-pattern";

test("every number up to twice the range's end matches exactly when it is in the range", () => {
  const ranges: [number, number][] = [
    [0, 0],
    [0, 9],
    [1, 20],
    [1, 100],
    [5, 300],
    [19, 21],
    [99, 101],
    [0, 1440],
    [200, 5000],
    [123, 4567],
    [0, 10_000],
    [1, 65_535],
  ];
  for (const [min, max] of ranges) {
    const re = new RegExp(`^${integerPattern(min, max)}$`);
    const wrong = Array.from({ length: max * 2 + 20 }, (_, n) => n).filter(
      (n) => re.test(String(n)) !== (n >= min && n <= max),
    );
    expect(wrong, `${min}..${max}`).toEqual([]);
    if (min > 0) expect(re.test(`0${min}`)).toBe(false);
  }
});
