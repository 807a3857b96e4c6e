// "arguments is a subset of the call's arguments", as tool mocks and toolCalled criteria match.

/** Every key of `expected` is in `actual` with an equal value; objects compare the same way, deeply. */
export function isSubset(expected: unknown, actual: unknown): boolean {
  if (isPlainObject(expected) && isPlainObject(actual))
    return Object.entries(expected).every(([key, value]) => Object.hasOwn(actual, key) && isSubset(value, actual[key]));
  return deepEqual(expected, actual);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** RFC 6901: the value at `pointer` inside `document`, or undefined when the path does not exist. */
export function atPointer(document: unknown, pointer: string): unknown {
  if (pointer === "") return document;
  let current = document;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(current) && /^(0|[1-9]\d*)$/.test(key)) current = current[Number(key)];
    else if (isPlainObject(current) && Object.hasOwn(current, key)) current = current[key];
    else return undefined;
  }
  return current;
}
