// Just enough of SIP's text format for the transport, which must read and rewrite a few headers
// before sip.js sees a message (or after it wrote one): start line, headers by name (compact forms
// too), the top Via, and Content-Length framing for streams.
const compact: Record<string, string> = {
  v: "via",
  f: "from",
  t: "to",
  i: "call-id",
  m: "contact",
  l: "content-length",
  c: "content-type",
};
const canonical = (name: string) => {
  const lower = name.trim().toLowerCase();
  return compact[lower] ?? lower;
};

export type SipMessage = { startLine: string; headers: string[]; body: string };

/** Splits a message; null for anything that does not look like SIP (garbage, keep-alives). */
export function splitMessage(text: string): SipMessage | null {
  const trimmed = text.replace(/^(\r?\n)+/, "");
  const end = trimmed.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [startLine = "", ...headers] = trimmed.slice(0, end).split("\r\n");
  if (!isRequestLine(startLine) && !isStatusLine(startLine)) return null;
  return { startLine, headers, body: trimmed.slice(end + 4) };
}

export const joinMessage = (m: SipMessage) => `${[m.startLine, ...m.headers].join("\r\n")}\r\n\r\n${m.body}`;

const isRequestLine = (line: string) => /^[A-Z]+ \S+ SIP\/2\.0$/.test(line);
const isStatusLine = (line: string) => /^SIP\/2\.0 \d{3}( |$)/.test(line);
export const isRequest = (m: SipMessage) => isRequestLine(m.startLine);
// a message from splitMessage has a valid start line, so both parts exist
export const methodOf = (m: SipMessage) => m.startLine.split(" ")[0] ?? "";
export const requestUri = (m: SipMessage) => m.startLine.split(" ")[1] ?? "";

export function headerIndex(m: SipMessage, name: string): number {
  const wanted = canonical(name);
  return m.headers.findIndex((h) => canonical(h.slice(0, h.indexOf(":"))) === wanted);
}

export function getHeader(m: SipMessage, name: string): string | null {
  const header = m.headers[headerIndex(m, name)];
  return header === undefined ? null : header.slice(header.indexOf(":") + 1).trim();
}

/** Header values of `name`, comma-separated lists split (for Via and Route). */
export function getHeaderList(m: SipMessage, name: string): string[] {
  const wanted = canonical(name);
  return m.headers
    .filter((h) => canonical(h.slice(0, h.indexOf(":"))) === wanted)
    .flatMap((h) => h.slice(h.indexOf(":") + 1).split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/))
    .map((v) => v.trim())
    .filter(Boolean);
}

export function removeHeader(m: SipMessage, name: string) {
  const wanted = canonical(name);
  m.headers = m.headers.filter((h) => canonical(h.slice(0, h.indexOf(":"))) !== wanted);
}

/** The top Via, rewritten by `fn` (it may sit in a header holding several). */
export function replaceTopVia(m: SipMessage, fn: (via: string) => string) {
  const i = headerIndex(m, "via");
  const line = m.headers[i];
  if (line === undefined) return;
  const colon = line.indexOf(":");
  const [top = "", ...rest] = line.slice(colon + 1).split(",");
  m.headers[i] = line.slice(0, colon + 1) + [` ${fn(top.trim())}`, ...rest].join(",");
}

export type Via = { protocol: string; host: string; port: number | null; params: Map<string, string | null> };

export function parseVia(value: string): Via | null {
  const match = /^SIP\s*\/\s*2\.0\s*\/\s*(\w+)\s+(\[[^\]]+\]|[^;:\s]+)(?::(\d+))?\s*(.*)$/i.exec(value);
  if (!match) return null;
  const [, protocol = "", host = "", port, rest = ""] = match;
  const params = new Map<string, string | null>();
  for (const part of rest.split(";").slice(1)) {
    const [k = "", v] = part.split("=");
    params.set(k.trim().toLowerCase(), v?.trim() ?? null);
  }
  return { protocol: protocol.toUpperCase(), host, port: port ? Number(port) : null, params };
}

/** user, host and port of a SIP URI (inside <> or bare, parameters ignored). */
export function parseUri(value: string): { user: string | null; host: string; port: number | null } | null {
  const inner = /<([^>]*)>/.exec(value)?.[1] ?? value.trim();
  const tel = /^tel:([^;?>]+)/i.exec(inner);
  if (tel?.[1] !== undefined) return { user: decodeURIComponent(tel[1]), host: "", port: null };
  const match = /^sips?:(?:([^@;?]*)@)?(\[[^\]]+\]|[^;:?>]+)(?::(\d+))?/i.exec(inner);
  if (!match) return null;
  const [, user, host = "", port] = match;
  return { user: user === undefined ? null : decodeURIComponent(user), host, port: port ? Number(port) : null };
}

/** Splits a byte stream (TCP) into messages by Content-Length; skips CRLF keep-alives. */
export class StreamFramer {
  private buffer = Buffer.alloc(0);

  constructor(private readonly maxBytes = 64 * 1024) {}

  /** Messages completed by `chunk`; throws when the stream is not SIP (the caller drops it). */
  push(chunk: Buffer): string[] {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const out: string[] = [];
    for (;;) {
      let start = 0;
      while (start < this.buffer.length && (this.buffer[start] === 13 || this.buffer[start] === 10)) start++;
      this.buffer = this.buffer.subarray(start);
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end < 0) {
        if (this.buffer.length > this.maxBytes) throw new Error("SIP header too large");
        return out;
      }
      const head = this.buffer.subarray(0, end).toString("utf8");
      const length = Number(/^(?:content-length|l)\s*:\s*(\d+)/im.exec(head)?.[1] ?? 0);
      if (length > this.maxBytes) throw new Error("SIP body too large");
      const total = end + 4 + length;
      if (this.buffer.length < total) return out;
      out.push(this.buffer.subarray(0, total).toString("utf8"));
      this.buffer = this.buffer.subarray(total);
    }
  }
}
