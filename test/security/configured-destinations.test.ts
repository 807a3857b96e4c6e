// Issue 10, points 1 and 3 at configuration time, through the API: a hook url, a tool serverUrl or a
// SIP hostname the outbound guard refuses is a 400 naming the field, and so is a header we would not
// send. The API runs with OUTBOUND_ALLOW_CIDRS=127.0.0.2/32, so 127.0.0.1 stands for any internal address.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTenant, startTestApi, toolSchema, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let tenant: Tenant;
beforeAll(async () => {
  api = await startTestApi({ OUTBOUND_ALLOW_CIDRS: "127.0.0.2/32" });
  tenant = await createTenant(api.url, "destinations");
});
afterAll(() => api.stop());

const hook = (parameters: Record<string, unknown>) => ({ type: "call_concluded", parameters });
const tool = (parameters: Record<string, unknown>) => ({
  type: "tool_webhook",
  parameters: { name: "t", schema: toolSchema("t"), ...parameters },
});
const createAssistant = (body: Record<string, unknown>) =>
  tenant.org.post(`${tenant.P}/assistants`, { name: "a", ...body });

const refusedHosts = [
  "127.0.0.1",
  "0x7f000001",
  "2130706433",
  "017700000001",
  "127.1",
  "0",
  "[::1]",
  "[::ffff:127.0.0.1]",
  "[::ffff:7f00:1]",
  "[64:ff9b::7f00:1]",
  "[::]",
  "localhost",
  "sub.localhost",
  "169.254.169.254",
  "10.0.0.1",
  "172.16.5.4",
  "192.168.0.1",
  "100.64.0.1",
  "[fd00::1]",
  "[fe80::1]",
  "224.0.0.1",
];

describe("hook urls", () => {
  for (const host of refusedHosts)
    test(`http://${host}/ is refused, naming callEventHooks[0].parameters.url`, async () => {
      const res = await createAssistant({ callEventHooks: [hook({ url: `http://${host}:8080/hook` })] });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { field: "callEventHooks[0].parameters.url", message: expect.stringContaining("not an allowed destination: ") },
      ]);
    });

  test("an allowed range and a public name are accepted (names are checked again when sent)", async () => {
    const res = await createAssistant({
      callEventHooks: [
        hook({ url: "http://127.0.0.2:8080/hook" }),
        { type: "call_started", parameters: { url: "https://hooks.example.com/in" } },
      ],
    });
    expect(res.status).toBe(201);
  });
});

describe("tool serverUrls and SIP hostnames", () => {
  test("a refused serverUrl names extensions[0].parameters.serverUrl", async () => {
    for (const host of ["127.0.0.1", "0x7f000001", "[::ffff:127.0.0.1]", "localhost", "169.254.169.254"]) {
      const res = await createAssistant({ extensions: [tool({ serverUrl: `http://${host}/tool` })] });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ field: "extensions[0].parameters.serverUrl" });
    }
    expect((await createAssistant({ extensions: [tool({ serverUrl: "http://127.0.0.2/tool" })] })).status).toBe(201);
  });

  test("a refused SIP registrar names hostname, on create and on update", async () => {
    const credential = { port: 5060, username: "u", password: "p" };
    for (const hostname of [
      "127.0.0.1",
      "0x7f000001",
      "2130706433",
      "localhost",
      "[::1]",
      "10.1.1.1",
      "169.254.169.254",
    ]) {
      const res = await tenant.org.post(`${tenant.P}/sip/credentials`, { ...credential, hostname });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe("hostname");
    }
    const created = await tenant.org.post(`${tenant.P}/sip/credentials`, { ...credential, hostname: "127.0.0.2" });
    expect(created.status).toBe(201);
    const updated = await tenant.org.put(`${tenant.P}/sip/credentials/${created.body.data.id}`, {
      ...credential,
      hostname: "127.0.0.1",
    });
    expect(updated.status).toBe(400);
    expect(updated.body.errors[0].field).toBe("hostname");
  });
});

describe("headers (point 3)", () => {
  const url = "http://127.0.0.2:8080/hook";
  const refusedNames = [
    "Host",
    "content-length",
    "Transfer-Encoding",
    "Connection",
    "Keep-Alive",
    "Upgrade",
    "TE",
    "Trailer",
    "Proxy-Authorization",
    "webhook-signature",
    "Webhook-Id",
    "X Bad",
    "X:Bad",
    "X-Evil\r\nInjected",
    "",
  ];
  for (const name of refusedNames)
    test(`header name ${JSON.stringify(name)} is refused, naming it`, async () => {
      const res = await createAssistant({ callEventHooks: [hook({ url, headers: { [name]: "v" } })] });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(
        name ? `callEventHooks[0].parameters.headers.${name}` : "callEventHooks[0].parameters.headers",
      );
    });

  for (const value of ["a\r\nX-Injected: 1", "a\nb", "a\rb", "nul\u0000", "bell\u0007", "wide\u2028"])
    test(`header value ${JSON.stringify(value)} is refused, naming the header`, async () => {
      const res = await createAssistant({ extensions: [tool({ serverUrl: url, headers: { "X-Token": value } })] });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toEqual({
        field: "extensions[0].parameters.headers.X-Token",
        message: expect.stringContaining("CR, LF, NUL"),
      });
    });

  test("ordinary headers pass, and one name given in two spellings is refused", async () => {
    const ok = await createAssistant({
      callEventHooks: [
        hook({ url, headers: { Authorization: "Bearer abc", "X-Api-Key": "k\tv", "x-trace_id.1": "é" } }),
      ],
    });
    expect(ok.status).toBe(201);
    const twice = await createAssistant({ callEventHooks: [hook({ url, headers: { "X-Key": "a", "x-key": "b" } })] });
    expect(twice.status).toBe(400);
    expect(twice.body.errors[0].field).toBe("callEventHooks[0].parameters.headers.x-key");
  });
});
