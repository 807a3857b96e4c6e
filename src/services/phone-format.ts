import { badRequest } from "../errors";

/**
 * One canonical form per number so that duplicates are caught and SIP lookups match: visual
 * separators dropped, international 00 prefix written as +. Numbers stay digits with an optional +
 * (extensions and short codes are digits too).
 */
export function normalizePhoneNumber(raw: string, field = "phoneNumber"): string {
  let n = raw.trim().replace(/[\s().\-/]/g, "");
  if (n.startsWith("00")) n = `+${n.slice(2)}`;
  if (!/^\+?[0-9]{2,20}$/.test(n)) throw badRequest(field, "must be a phone number: digits with an optional leading +");
  return n;
}
