// Integer ranges as regular expressions, for schemas whose values are digit strings (query parameters):
// the OpenAPI document then says the range in the one way a string schema can, and validation uses it too.

/** A regular expression (no anchors, a group when it has alternatives) for the decimal integers min..max (min >= 0), written without leading zeros. */
export function integerPattern(min: number, max: number): string {
  const parts: string[] = [];
  // one run per count of digits: 5..300 is 5..9, 10..99, 100..300
  for (let digits = String(min).length; digits <= String(max).length; digits++) {
    const low = Math.max(min, digits === 1 ? 0 : 10 ** (digits - 1));
    const high = Math.min(max, 10 ** digits - 1);
    if (low <= high) parts.push(...sameLength(String(low), String(high)));
  }
  return parts.length === 1 ? parts[0]! : `(?:${parts.join("|")})`;
}

/** Alternatives matching the numbers low..high, both written with the same number of digits. */
function sameLength(low: string, high: string): string[] {
  const digit = (a: string, b: string) => (a === b ? a : `[${a}-${b}]`);
  if (low.length === 1) return [digit(low, high)];
  const [lowRest, highRest] = [low.slice(1), high.slice(1)];
  if (low[0] === high[0]) return sameLength(lowRest, highRest).map((p) => low[0] + p);
  const any = (n: number) => (n === 1 ? "[0-9]" : `[0-9]{${n}}`);
  const n = lowRest.length;
  const zeros = "0".repeat(n);
  const nines = "9".repeat(n);
  const parts: string[] = [];
  // the first digit of low with the rest from lowRest up, the middle digits with any rest, the last up to highRest
  let first = Number(low[0]);
  let last = Number(high[0]);
  if (lowRest !== zeros) parts.push(...sameLength(lowRest, nines).map((p) => low[0] + p));
  else first--;
  if (highRest !== nines) last--;
  if (first + 1 <= last) parts.push(digit(String(first + 1), String(last)) + any(n));
  if (highRest !== nines) parts.push(...sameLength(zeros, highRest).map((p) => high[0] + p));
  return parts;
}
