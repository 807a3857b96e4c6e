// Which headers a tenant may have us send to its hook and tool endpoints. Names are RFC 9110 tokens,
// values are RFC 9110 field values (no CR, LF, NUL or other controls: no header injection, and nothing
// node:http would refuse at send time), and the headers that frame the message, steer the connection
// or proxies, or carry our signature are ours alone.
//
// API: headerProblems(headers) -> [{ name, message }] (empty when all are fine), for the API's 400s;
//      headersRefusal(headers) -> why stored headers cannot be sent, or null, for the senders (rows
//      written before these checks existed are refused, not sent).

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// field-vchar, SP and HTAB (RFC 9110 5.5); obs-text (0x80-0xFF) as node:http accepts it
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const RESERVED = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "content-type",
  "user-agent",
]);
const RESERVED_PREFIXES = ["proxy-", "webhook-"];

export const MAX_HEADERS = 32;
export const MAX_HEADER_VALUE_LENGTH = 4096;

export function headerProblems(headers: Record<string, string>): { name: string; message: string }[] {
  const problems: { name: string; message: string }[] = [];
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) problems.push({ name: "", message: `at most ${MAX_HEADERS} headers` });
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name))
      problems.push({ name, message: "a header name is a token: letters, digits and !#$%&'*+.^_`|~-" });
    else if (RESERVED.has(lower) || RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix)))
      problems.push({ name, message: `${name} is set by the service and cannot be configured` });
    else if (seen.has(lower)) problems.push({ name, message: "given twice (header names are case-insensitive)" });
    else if (!FIELD_VALUE.test(value))
      problems.push({ name, message: "the value may not contain CR, LF, NUL or other control characters" });
    else if (value.length > MAX_HEADER_VALUE_LENGTH)
      problems.push({ name, message: `the value is longer than ${MAX_HEADER_VALUE_LENGTH} characters` });
    seen.add(lower);
  }
  return problems;
}

export function headersRefusal(headers: Record<string, string>): string | null {
  const [first] = headerProblems(headers);
  return first
    ? `configured header ${first.name ? `${JSON.stringify(first.name)} ` : ""}not sent: ${first.message}`
    : null;
}
