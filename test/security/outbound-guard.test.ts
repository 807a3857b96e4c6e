// Issue 10, point 1 at send time: every tenant destination goes through the outbound guard. Real
// sockets: a "loopback-only service" listens on 127.0.0.1 and an allowed receiver on 127.0.0.2 (same
// port), so a test shows which one a request reached, not only what the guard said.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import https from "node:https";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { callToolWebhook, toolFailureMessage } from "../../src/calls/tool-webhook";
import { sendHook } from "../../src/events/send-hook";
import { createOutboundGuard, parseAllowCidrs, type Resolver } from "../../src/net/outbound-guard";
import { ensureTemporal, startWorker } from "../helpers/temporal";
import { attemptsOf, callConcluded, createAssistantWithHooks, emit, openDb, waitForStatus } from "../hooks/fixtures";
import { listenPair, type Listener } from "./listeners";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
let pair: Awaited<ReturnType<typeof listenPair>>;
let allowed: Listener;
let internal: Listener;
let port: number;

beforeAll(async () => {
  pair = await listenPair((path) =>
    path === "/redirect"
      ? { status: 302, headers: { location: `http://127.0.0.1:${port}/secret` } }
      : { status: 200, body: "reached" },
  );
  ({ allowed, internal, port } = pair);
});
afterAll(() => pair.close());

/** A resolver that answers `answers[i]` on its i-th call (the last one after that) and counts calls. */
function scripted(...answers: string[][]): Resolver & { calls: number } {
  const resolve = Object.assign(async () => answers[Math.min(resolve.calls++, answers.length - 1)] ?? [], { calls: 0 });
  return resolve;
}

const hook = (url: string, guard = createOutboundGuard({ allowCidrs: [] })) =>
  sendHook({ url, method: "POST", headers: {}, body: Buffer.from("{}"), timeoutMs: 2_000, guard });

describe("refused by default (no OUTBOUND_ALLOW_CIDRS)", () => {
  // every spelling below reaches 127.0.0.1 (or ::1) if sent; the listener on 127.0.0.1 must see none of them
  const loopbackForms = [
    "127.0.0.1",
    "0x7f000001",
    "2130706433",
    "017700000001",
    "0177.0.0.1",
    "127.1",
    "0",
    "0.0.0.0",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[0:0:0:0:0:ffff:127.0.0.1]",
    "[::ffff:0:127.0.0.1]",
    "[64:ff9b::127.0.0.1]",
    "[::127.0.0.1]",
    "[::]",
    "localhost",
    "LocalHost.",
    "api.localhost",
  ];
  for (const host of loopbackForms) {
    test(`http://${host}:port is refused before any connection`, async () => {
      const before = internal.requests.length;
      const res = await hook(`http://${host}:${port}/x`);
      expect(res).toMatchObject({ ok: false, statusCode: null, refused: true });
      expect(res.error).toStartWith("destination refused: ");
      expect(internal.requests.length).toBe(before);
    });
  }

  const otherRanges = [
    ["169.254.169.254", "linkLocal"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.10", "reserved"],
    ["[fe80::1]", "linkLocal"],
    ["[fd00::1]", "uniqueLocal"],
    ["[ff02::1]", "multicast"],
    ["[2002:a9fe:a9fe::1]", "6to4"],
    ["[2001:0:4136:e378::1]", "teredo"],
    ["[::ffff:169.254.169.254]", "linkLocal"],
  ];
  for (const [host, range] of otherRanges) {
    test(`${host} (${range}) is refused and the reason names the range`, async () => {
      const res = await hook(`http://${host}/latest/meta-data/`);
      expect(res.refused).toBe(true);
      expect(res.error).toContain(range!);
    });
  }
});

describe("names are resolved once and every answer is checked", () => {
  test("a name that resolves to loopback is refused", async () => {
    const resolve = scripted(["127.0.0.1"]);
    const res = await hook(`http://internal.example:${port}/x`, createOutboundGuard({ allowCidrs: [], resolve }));
    expect(res).toMatchObject({
      refused: true,
      error: expect.stringContaining("internal.example resolves to 127.0.0.1"),
    });
    expect(internal.requests).toHaveLength(0);
  });

  test("one refused answer among public ones refuses the name", async () => {
    const resolve = scripted(["93.184.215.14", "::ffff:10.0.0.1"]);
    const res = await hook(`http://mixed.example:${port}/x`, createOutboundGuard({ allowCidrs: [], resolve }));
    expect(res.refused).toBe(true);
    expect(res.error).toContain("10.0.0.1");
  });

  test("a name that does not resolve fails cleanly, as a retryable failure (DNS may answer later)", async () => {
    const resolve: Resolver = async () => {
      throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    };
    const res = await hook(`http://nowhere.example/x`, createOutboundGuard({ allowCidrs: [], resolve }));
    expect(res).toMatchObject({ ok: false, statusCode: null, error: "nowhere.example does not resolve (ENOTFOUND)" });
    expect(res.refused).toBeUndefined();
  });

  test("DNS rebinding: the answer changes after the check, the connection still goes to the checked address", async () => {
    // first lookup: the allowed 127.0.0.2; any later lookup would say 127.0.0.1 (the internal service)
    const resolve = scripted(["127.0.0.2"], ["127.0.0.1"]);
    const guard = createOutboundGuard({ allowCidrs: ["127.0.0.2/32"], resolve });
    const [a, b] = [allowed.requests.length, internal.requests.length];
    const res = await hook(`http://rebind.example:${port}/hook`, guard);
    expect(res).toMatchObject({ ok: true, statusCode: 200 });
    expect(resolve.calls).toBe(1);
    expect(allowed.requests.length).toBe(a + 1);
    expect(allowed.requests.at(-1)?.headers.host).toBe(`rebind.example:${port}`);
    expect(internal.requests.length).toBe(b);
  });

  test("DNS rebinding the other way: a refused first answer is final", async () => {
    const resolve = scripted(["127.0.0.1"], ["127.0.0.2"]);
    const guard = createOutboundGuard({ allowCidrs: ["127.0.0.2/32"], resolve });
    const res = await hook(`http://rebind.example:${port}/hook`, guard);
    expect(res.refused).toBe(true);
    expect(resolve.calls).toBe(1);
  });

  test("the same holds in Node, the hook worker's runtime", async () => {
    // async: the listeners live in this process and must keep answering while node runs
    const run = async (answers: string[][]) => {
      const arg = JSON.stringify({ url: `http://rebind.example:${port}/node`, allowCidrs: ["127.0.0.2/32"], answers });
      const { stdout } = await promisify(execFile)(
        "node",
        ["--import", "tsx", "test/security/child-exchange.ts", arg],
        { cwd: repoRoot },
      );
      return JSON.parse(stdout) as { ok: boolean; refused?: boolean; lookups: number; runtime: string };
    };
    const before = internal.requests.length;
    expect(await run([["127.0.0.2"], ["127.0.0.1"]])).toMatchObject({ ok: true, lookups: 1, runtime: "node" });
    expect(allowed.requests.at(-1)?.path).toBe("/node");
    expect(await run([["127.0.0.1"], ["127.0.0.2"]])).toMatchObject({ ok: false, refused: true, lookups: 1 });
    expect(internal.requests.length).toBe(before);
  });

  test("Node keeps connections alive, reused only for the same checked addresses", async () => {
    // every exchange resolves again; the third answer is another (here allowed) address: it must get a
    // connection of its own to that address, not the kept-alive one to the first
    const arg = JSON.stringify({
      url: `http://rebind.example:${port}/kept`,
      allowCidrs: ["127.0.0.1/32", "127.0.0.2/32"],
      answers: [["127.0.0.2"], ["127.0.0.2"], ["127.0.0.1"]],
      sends: 3,
    });
    const [a, b] = [allowed.requests.length, internal.requests.length];
    const { stdout } = await promisify(execFile)("node", ["--import", "tsx", "test/security/child-exchange.ts", arg], {
      cwd: repoRoot,
    });
    const out = JSON.parse(stdout) as { results: { ok: boolean }[]; lookups: number; runtime: string };
    expect(out).toMatchObject({ lookups: 3, runtime: "node" });
    expect(out.results.map((r) => r.ok)).toEqual([true, true, true]);
    const kept = allowed.requests.slice(a);
    expect(kept.map((r) => r.path)).toEqual(["/kept", "/kept"]);
    // the second exchange went over the first one's connection
    expect(kept[1]!.remotePort).toBe(kept[0]!.remotePort);
    expect(internal.requests.slice(b).map((r) => r.path)).toEqual(["/kept"]);
  });
});

describe("TLS through the checked address", () => {
  // a self-signed certificate for tls.example, for this test only (fixtures/), trusted by the children
  const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
  let server: https.Server;
  let tlsPort: number;
  beforeAll(async () => {
    const tls = { cert: readFileSync(`${fixtures}tls-example.crt`), key: readFileSync(`${fixtures}tls-example.key`) };
    server = https.createServer(tls, (req, res) => res.end(`tls ${req.headers.host}`));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.2", resolve));
    tlsPort = (server.address() as { port: number }).port;
  });
  afterAll(() => server.close());

  const exchange = async (runtime: string[], name: string) => {
    const arg = JSON.stringify({
      url: `https://${name}:${tlsPort}/tls`,
      allowCidrs: ["127.0.0.2/32"],
      answers: [["127.0.0.2"]],
    });
    const env = { ...process.env, NODE_EXTRA_CA_CERTS: `${fixtures}tls-example.crt` };
    const { stdout } = await promisify(execFile)(
      runtime[0]!,
      [...runtime.slice(1), "test/security/child-exchange.ts", arg],
      { cwd: repoRoot, env },
    );
    return JSON.parse(stdout) as { ok: boolean; error: string | null; responseExcerpt: string | null; lookups: number };
  };

  for (const runtime of [["node", "--import", "tsx"], ["bun"]])
    test(`${runtime[0]}: the certificate is verified against the URL's name, not the address connected to`, async () => {
      expect(await exchange(runtime, "tls.example")).toMatchObject({
        ok: true,
        responseExcerpt: `tls tls.example:${tlsPort}`,
        lookups: 1,
      });
      const other = await exchange(runtime, "other.example");
      expect(other.ok).toBe(false);
      expect(other.error).toContain("ERR_TLS_CERT_ALTNAME_INVALID");
    });
});

describe("OUTBOUND_ALLOW_CIDRS opens ranges explicitly", () => {
  test("an allowed range is reached; its neighbours stay refused", async () => {
    const guard = createOutboundGuard({ allowCidrs: parseAllowCidrs("127.0.0.2/32, fd00::/8") });
    expect(await hook(`http://127.0.0.2:${port}/open`, guard)).toMatchObject({ ok: true, statusCode: 200 });
    expect((await hook(`http://127.0.0.1:${port}/open`, guard)).refused).toBe(true);
    expect(guard.refusalOf("fd12::1")).toBeNull();
    expect(guard.refusalOf("fe80::1")).not.toBeNull();
  });

  test("an IPv4-mapped or NAT64 form is judged by the IPv4 address it embeds", () => {
    const guard = createOutboundGuard({ allowCidrs: ["127.0.0.2/32"] });
    expect(guard.refusalOf("::ffff:127.0.0.2")).toBeNull();
    expect(guard.refusalOf("::ffff:127.0.0.1")).toContain("127.0.0.1");
    expect(guard.refusalOf("64:ff9b::8.8.8.8")).toBeNull();
  });

  test("a malformed entry stops the process at start-up with its name", () => {
    expect(() => parseAllowCidrs("10.0.0.0/8,not-a-range")).toThrow(
      'OUTBOUND_ALLOW_CIDRS: "not-a-range" is not a CIDR',
    );
  });
});

describe("redirects are not followed", () => {
  test("a hook answered with 302 to a refused address: the redirect is the result, nothing reaches it", async () => {
    const guard = createOutboundGuard({ allowCidrs: ["127.0.0.2/32"] });
    const before = internal.requests.length;
    const res = await hook(`http://127.0.0.2:${port}/redirect`, guard);
    expect(res).toMatchObject({ ok: false, statusCode: 302, error: "redirect not followed (status 302)" });
    expect(internal.requests.length).toBe(before);
  });

  test("a tool server answered with 302: the LLM gets the generic failure", async () => {
    const guard = createOutboundGuard({ allowCidrs: ["127.0.0.2/32"] });
    const before = internal.requests.length;
    const res = await callToolWebhook({
      serverUrl: `http://127.0.0.2:${port}/redirect`,
      name: "t",
      callId: "c",
      transport: { type: "websocket" },
      parameters: {},
      guard,
    });
    expect(res).toMatchObject({
      ok: false,
      status: 302,
      output: toolFailureMessage,
      error: "redirect not followed (status 302)",
    });
    expect(internal.requests.length).toBe(before);
  });
});

test("a refused tool server: the LLM gets the generic failure, the log reason names the refusal", async () => {
  const res = await callToolWebhook({
    serverUrl: `http://0x7f000001:${port}/tool`,
    name: "t",
    callId: "c",
    transport: { type: "websocket" },
    parameters: {},
    guard: createOutboundGuard({ allowCidrs: [] }),
  });
  expect(res).toMatchObject({ ok: false, status: null, output: toolFailureMessage });
  expect(res.error).toBe("destination refused: 127.0.0.1 is in the loopback range");
});

describe("the hook worker (Node, real Temporal)", () => {
  test("a refused destination fails on its first attempt with the reason recorded; an allowed one is delivered", async () => {
    const { db, close } = openDb();
    const { address } = await ensureTemporal();
    // the worker allows only 127.0.0.2: 127.0.0.1 stands for the internal service a hook must not reach
    const worker = await startWorker({ address, backoffBaseMs: 50, env: { OUTBOUND_ALLOW_CIDRS: "127.0.0.2/32" } });
    try {
      const a = await createAssistantWithHooks(db, [
        { url: `http://127.0.0.1:${port}/internal` },
        { url: `http://127.0.0.2:${port}/allowed` },
      ]);
      const before = internal.requests.length;
      const { deliveryIds } = await emit(db, {
        organizationId: a.organizationId,
        assistantId: a.assistantId,
        event: callConcluded(),
      });
      const rows = await waitForStatus(db, deliveryIds, ["SUCCEEDED", "FAILED"], 20_000);
      const refused = rows.find((r) => r.url.endsWith("/internal"))!;
      const delivered = rows.find((r) => r.url.endsWith("/allowed"))!;
      expect(refused).toMatchObject({ status: "FAILED", attemptCount: 1 });
      expect(delivered).toMatchObject({ status: "SUCCEEDED" });
      const attempts = await attemptsOf(db, refused.id);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({
        statusCode: null,
        error: "destination refused: 127.0.0.1 is in the loopback range",
      });
      expect(internal.requests.length).toBe(before);
      expect(allowed.requests.some((r) => r.path === "/allowed")).toBe(true);
    } finally {
      await worker.kill();
      await close();
    }
  }, 60_000);
});

test("headers stored before the API checked them are refused at send time, not sent", async () => {
  const guard = createOutboundGuard({ allowCidrs: ["127.0.0.2/32"] });
  const before = allowed.requests.length;
  const hookRes = await sendHook({
    url: `http://127.0.0.2:${port}/stored`,
    method: "POST",
    headers: { Host: "internal.admin" },
    signature: { "webhook-id": "msg_1" },
    body: Buffer.from("{}"),
    timeoutMs: 2_000,
    guard,
  });
  expect(hookRes).toMatchObject({ ok: false, refused: true, error: expect.stringContaining('"Host"') });
  const toolRes = await callToolWebhook({
    serverUrl: `http://127.0.0.2:${port}/stored`,
    headers: { "X-Evil": "a\r\nHost: internal.admin" },
    name: "t",
    callId: "c",
    transport: { type: "websocket" },
    parameters: {},
    guard,
  });
  expect(toolRes).toMatchObject({ ok: false, output: toolFailureMessage, error: expect.stringContaining('"X-Evil"') });
  expect(allowed.requests.length).toBe(before);
  // our own signature headers still go out with a hook's ordinary headers
  const signed = await sendHook({
    url: `http://127.0.0.2:${port}/signed`,
    method: "POST",
    headers: { authorization: "Bearer t" },
    signature: { "webhook-id": "msg_2" },
    body: Buffer.from("{}"),
    timeoutMs: 2_000,
    guard,
  });
  expect(signed.ok).toBe(true);
  expect(allowed.requests.at(-1)?.headers["webhook-id"]).toBe("msg_2");
});
