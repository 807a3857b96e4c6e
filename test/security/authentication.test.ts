// Issue 10, point 6: a revoked token is refused by the bridge at once (NOTIFY, not the cache's 30 s),
// and repeated failed authentication from one address is throttled (429 + Retry-After, in the
// envelope) by the API and by the bridge, while tokens known valid keep working from that address.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { startBridge, type Bridge } from "../../src/bridge/ws-server";
import { loadConfig } from "../../src/config";
import { AUTH_FAILURE_LIMIT } from "../../src/services/auth";
import { createTenant, startTestApi, type TestApi } from "../helpers/api";
import { requestsFrom } from "../helpers/requests-from";

let api: TestApi;
let bridge: Bridge;
let bridgeHttp: string;

beforeAll(async () => {
  api = await startTestApi();
  bridge = await startBridge(loadConfig({ ...process.env, BRIDGE_INSTANCE_ID: `security-${process.pid}` }), {
    port: 0,
  });
  bridgeHttp = `http://127.0.0.1:${bridge.port}`;
});
afterAll(async () => {
  await bridge?.stop();
  await api?.stop();
});

const bridgeCall = (token: string) =>
  `${bridgeHttp}/v1/calls?assistantId=${randomUUID()}&token=${encodeURIComponent(token)}`;

/**
 * A call request to the bridge as a plain HTTP GET (refusals come before the websocket upgrade).
 * An unknown assistant id: a valid token gets 404, an invalid one 401, so no call ever starts.
 */
async function callBridge(token: string) {
  const res = await fetch(bridgeCall(token));
  return { status: res.status, body: await res.json() };
}

describe("revocation", () => {
  test("a token revoked through the API is refused by the bridge within a second", async () => {
    const tenant = await createTenant(api.url, "revoke");
    const created = await tenant.admin.post(`/api/v1/vendors/${tenant.vendorId}/api-tokens`, {
      name: "to revoke",
      organizationId: tenant.organizationId,
    });
    const { id, token } = created.body.data as { id: string; token: string };
    // valid, and now in the bridge's 30 s cache
    expect((await callBridge(token)).status).toBe(404);
    expect((await callBridge(token)).status).toBe(404);

    const revoked = await tenant.admin.delete(`/api/v1/vendors/${tenant.vendorId}/api-tokens/${id}`);
    expect(revoked.status).toBeLessThan(300);
    const start = Date.now();
    let status = (await callBridge(token)).status;
    while (status !== 401 && Date.now() - start < 1_000) {
      await Bun.sleep(20);
      status = (await callBridge(token)).status;
    }
    expect(status).toBe(401);
    expect(Date.now() - start).toBeLessThan(1_000);
    expect(
      (await fetch(`${api.url}${tenant.P}/assistants`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(401);
  });
});

describe("failed-authentication throttle", () => {
  const wrong = (n: number, url: (i: number) => string, headers: (i: number) => Record<string, string> = () => ({})) =>
    Array.from({ length: n }, (_, i) => ({ url: url(i), headers: headers(i) }));

  test("the API: after the limit, 429 with Retry-After in the envelope; valid tokens and other addresses unaffected", async () => {
    const tenant = await createTenant(api.url, "throttle");
    const path = `${api.url}${tenant.P}/assistants`;
    const valid = { authorization: `Bearer ${tenant.orgToken}` };
    const answers = await requestsFrom("127.0.0.2", [
      { url: path, headers: valid },
      ...wrong(
        AUTH_FAILURE_LIMIT + 3,
        () => path,
        (i) => ({ authorization: `Bearer vas_wrong_${i}` }),
      ),
      // no token at all is refused the same way
      { url: path },
      // the token this process knows valid passes from the throttled address; so does the admin token
      { url: path, headers: valid },
      { url: path, headers: { authorization: `Bearer ${process.env.ADMIN_TOKEN}` } },
      // routes outside /api (health) are not throttled
      { url: `${api.url}/healthz` },
    ]);
    const statuses = answers.map((a) => a.status);
    expect(statuses).toEqual([200, ...Array(AUTH_FAILURE_LIMIT).fill(401), 429, 429, 429, 429, 200, 200, 200]);
    const throttled = answers[AUTH_FAILURE_LIMIT + 1]!;
    expect(Number(throttled.retryAfter)).toBeGreaterThan(0);
    expect(Number(throttled.retryAfter)).toBeLessThanOrEqual(60);
    expect(throttled.body).toMatchObject({
      success: false,
      data: null,
      message: expect.stringContaining("too many failed authentication"),
    });
    expect(throttled.body.traceId).toBeString();

    // another address is not throttled: a wrong token there is a plain 401, a valid one works
    const other = await requestsFrom("127.0.0.3", [
      { url: path, headers: { authorization: "Bearer vas_wrong" } },
      { url: path, headers: valid },
    ]);
    expect(other.map((a) => a.status)).toEqual([401, 200]);
  });

  test("the bridge: after the limit, 429 with Retry-After in the envelope; a known token still passes", async () => {
    const tenant = await createTenant(api.url, "bridge-throttle");
    const answers = await requestsFrom("127.0.0.4", [
      { url: bridgeCall(tenant.orgToken) },
      ...wrong(AUTH_FAILURE_LIMIT + 2, (i) => bridgeCall(`wrong_${i}`)),
      { url: bridgeCall(tenant.orgToken) },
    ]);
    expect(answers.map((a) => a.status)).toEqual([404, ...Array(AUTH_FAILURE_LIMIT).fill(401), 429, 429, 404]);
    const throttled = answers[AUTH_FAILURE_LIMIT + 1]!;
    expect(Number(throttled.retryAfter)).toBeGreaterThan(0);
    expect(throttled.body).toMatchObject({
      success: false,
      data: null,
      message: expect.stringContaining("too many failed authentication"),
    });
    expect((await requestsFrom("127.0.0.5", [{ url: bridgeCall("wrong") }]))[0]?.status).toBe(401);
  });
});
