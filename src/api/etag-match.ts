// Entity tags as RFC 9110 compares them (section 8.8.3 and 13.1): what If-Match and If-None-Match hold,
// and the strong and weak comparison functions. Pure functions, so the rules are tested on their own.
import { createHash } from "node:crypto";

export type EntityTag = { weak: boolean; opaque: string };
/** `*`, or the listed tags; null when the value does not parse. */
export type TagCondition = "*" | EntityTag[];

/** A strong tag derived only from the representation, so every API instance computes the same one. */
const hashed = (data: unknown) =>
  `"${createHash("sha256").update(JSON.stringify(data)).digest("base64url").slice(0, 32)}"`;

// Reads by id answer the read model's shared objects, which nobody changes (src/db/read-model.ts):
// one hash per object kept, not one per request.
const known = new WeakMap<object, string>();
export function etagOf(data: unknown) {
  if (typeof data !== "object" || data === null) return hashed(data);
  const etag = known.get(data) ?? hashed(data);
  known.set(data, etag);
  return etag;
}

// entity-tag = [ W/ ] DQUOTE *etagc DQUOTE; etagc = %x21 / %x23-7E / obs-text
const TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"/;

/** Parses `*` / #entity-tag (empty list elements are allowed, as the # rule says). */
export function parseTagCondition(value: string): TagCondition | null {
  const trimmed = value.trim();
  if (trimmed === "*") return "*";
  const tags: EntityTag[] = [];
  let rest = trimmed;
  while (rest.length > 0) {
    if (rest[0] === ",") {
      rest = rest.slice(1).trimStart();
      continue;
    }
    const match = TAG.exec(rest);
    if (!match) return null;
    tags.push({ weak: match[1] !== undefined, opaque: match[2]! });
    rest = rest.slice(match[0].length).trimStart();
    if (rest.length > 0 && rest[0] !== ",") return null;
  }
  return tags.length > 0 ? tags : null;
}

const opaqueOf = (etag: string) => parseTagCondition(etag) as EntityTag[];

/** If-Match: strong comparison, so a weak tag never matches. */
export function matchesStrongly(condition: TagCondition, current: string): boolean {
  if (condition === "*") return true;
  const [tag] = opaqueOf(current);
  return condition.some((c) => !c.weak && !tag!.weak && c.opaque === tag!.opaque);
}

/** If-None-Match: weak comparison. */
export function matchesWeakly(condition: TagCondition, current: string): boolean {
  if (condition === "*") return true;
  const [tag] = opaqueOf(current);
  return condition.some((c) => c.opaque === tag!.opaque);
}
