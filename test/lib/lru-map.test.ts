import { expect, test } from "bun:test";
import { LruMap } from "../../src/lib/lru-map";

test("a full LruMap forgets the entry used least recently", () => {
  const map = new LruMap<string, number>(2);
  map.set("a", 1);
  map.set("b", 2);
  expect(map.get("a")).toBe(1);
  map.set("c", 3);
  expect(map.get("b")).toBeUndefined();
  expect([map.get("a"), map.get("c"), map.size]).toEqual([1, 3, 2]);
  map.set("a", 4);
  expect([map.get("a"), map.size]).toEqual([4, 2]);
});
