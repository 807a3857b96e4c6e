// The INVITE as the trunk sees it, from a script trunk on loopback: a 407 (then a 401) challenge is
// answered on the same Call-ID with CSeq + 1, the digest's `uri` exactly the Request-URI and its
// response right for the credential's password; From is the caller id at the trunk's host, the
// Request-URI the number's digits there. A trunk that refuses (403) or answers nothing fails the call.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";

type Mode = { challenge: 401 | 407; final: number } | "silent";
type Seen = { startLine: string; headers: Map<string, string> };

let world: SipWorld;
let assistantId: string;
let credentialId: string;
let mode: Mode = { challenge: 407, final: 603 };
const invites: Seen[] = [];
let trunk: { port: number; send(data: string, port: number, address: string): boolean; close(): void };

const md5 = (s: string) => createHash("md5").update(s).digest("hex");

function parse(text: string): Seen {
  const [startLine = "", ...lines] = text.split("\r\n\r\n")[0]!.split("\r\n");
  const headers = new Map<string, string>();
  for (const line of lines) {
    const i = line.indexOf(":");
    const name = line.slice(0, i).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(i + 1).trim());
  }
  return { startLine, headers };
}

function reply(request: string, status: string, extra: string[] = []) {
  const lines = request.split("\r\n\r\n")[0]!.split("\r\n").slice(1);
  const keep = lines.filter((l) => /^(via|from|call-id|cseq)\s*:/i.test(l));
  const to = lines.find((l) => /^to\s*:/i.test(l))!;
  return [
    `SIP/2.0 ${status}`,
    ...keep,
    /;tag=/.test(to) ? to : `${to};tag=trunk1`,
    ...extra,
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
}

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {});
  trunk = await Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: {
      data(_socket, data, port, address) {
        const text = data.toString();
        const seen = parse(text);
        const method = seen.startLine.split(" ")[0];
        const send = (s: string) => {
          trunk.send(s, port, address);
        };
        if (method === "REGISTER")
          return send(reply(text, "200 OK", [`Contact: ${seen.headers.get("contact")};expires=60`]));
        if (method !== "INVITE" || mode === "silent") return; // ACK, CANCEL, or a trunk that answers nothing
        invites.push(seen);
        const header = mode.challenge === 407 ? "proxy-authorization" : "authorization";
        if (!seen.headers.has(header)) {
          const name = mode.challenge === 407 ? "Proxy-Authenticate" : "WWW-Authenticate";
          const status = mode.challenge === 407 ? "407 Proxy Authentication Required" : "401 Unauthorized";
          return send(reply(text, status, [`${name}: Digest realm="trunk", nonce="n0nce", qop="auth", algorithm=MD5`]));
        }
        send(reply(text, `${mode.final} Refused`));
      },
    },
  });
  credentialId = await world.createCredential("digest-user", "s3cret", 5, {
    host: "127.0.0.1",
    port: trunk.port,
    stop: async () => {},
    output: () => "",
  });
  const numberId = await world.createNumber(credentialId, "+15550407777");
  assistantId = (await world.createAssistant({ numberId })).id;
  await world.startBridge("digest");
  await world.registered(credentialId);
}, 90_000);
afterAll(async () => {
  trunk?.close();
  await world?.stop();
});

const place = (body: Record<string, unknown>) =>
  world.tenant.org.post(`${world.tenant.P}/calls`, { assistantId, ...body });
const ended = (id: string) =>
  eventually(async () => {
    const t = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${id}`)).body.data;
    return t.status === "completed" || t.status === "failed" ? t : null;
  }, "the task to end");

function checkDigest(first: Seen, second: Seen, header: string) {
  const requestUri = second.startLine.split(" ")[1]!;
  expect(requestUri).toBe(`sip:15550400001@127.0.0.1:${trunk.port}`);
  expect(second.headers.get("call-id")).toBe(first.headers.get("call-id")!);
  const cseq = (s: Seen) => s.headers.get("cseq")!.split(/\s+/);
  expect(cseq(first)[1]).toBe("INVITE");
  expect(Number(cseq(second)[0])).toBe(Number(cseq(first)[0]) + 1);
  expect(second.headers.get("from")).toMatch(/^<sip:\+15550407777@127\.0\.0\.1>;tag=/);
  const digest = Object.fromEntries(
    [
      ...second.headers
        .get(header)!
        .replace(/^Digest\s+/i, "")
        .matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]+))/g),
    ].map((m) => [m[1]!, m[2] ?? m[3]!]),
  );
  expect(digest.uri).toBe(requestUri);
  expect(digest.username).toBe("digest-user");
  const ha1 = md5(`digest-user:trunk:s3cret`);
  const ha2 = md5(`INVITE:${digest.uri}`);
  expect(digest.response).toBe(md5(`${ha1}:n0nce:${digest.nc}:${digest.cnonce}:auth:${ha2}`));
}

for (const challenge of [407, 401] as const) {
  test(`a ${challenge} challenge is answered on the same Call-ID, CSeq + 1, the digest uri the Request-URI`, async () => {
    mode = { challenge, final: 603 };
    invites.length = 0;
    const placed = await place({ to: "+15550400001" });
    expect(placed.status).toBe(201);
    const done = await ended(placed.body.data.id);
    expect(done).toMatchObject({ endedReason: "declined", sipStatus: 603, status: "completed" });
    expect(invites).toHaveLength(2);
    checkDigest(invites[0]!, invites[1]!, challenge === 407 ? "proxy-authorization" : "authorization");
  });
}

test("a trunk that refuses (403) fails the call with the status kept", async () => {
  mode = { challenge: 407, final: 403 };
  const done = await ended((await place({ to: "+15550400001" })).body.data.id);
  expect(done).toMatchObject({ status: "failed", endedReason: "failed", sipStatus: 403, error: "403 Refused" });
});

test("a trunk that answers nothing: failed without a status once the ring time-out passes", async () => {
  mode = "silent";
  const done = await ended((await place({ to: "+15550400001", ringTimeoutSeconds: 5 })).body.data.id);
  expect(done).toMatchObject({ status: "failed", endedReason: "failed", sipStatus: null });
  // nothing was left taken: the credential's slots are all free again
  expect((await world.tasks((t) => t.credentialId === credentialId && t.status === "offered")).length).toBe(0);
});
