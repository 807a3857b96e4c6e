// A real API server on a free port against the run's database, and a small JSON client for it.
import { loadConfig } from "../../src/config";
import { startApi } from "../../src/server";

export type Reply = { status: number; body: any; headers: Headers };

export async function startTestApi(env: Record<string, string> = {}) {
  const api = await startApi(loadConfig({ ...process.env, ...env }), { port: 0 });
  return {
    url: api.url,
    metricsPort: api.metricsPort,
    stop: api.stop,
    client: (token?: string) => client(api.url, token),
  };
}

export function client(baseUrl: string, token?: string) {
  async function send(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const res = await fetch(baseUrl + path, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  }
  return {
    get: (path: string, headers?: Record<string, string>) => send("GET", path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => send("POST", path, body ?? {}, headers),
    put: (path: string, body?: unknown) => send("PUT", path, body ?? {}),
    delete: (path: string) => send("DELETE", path),
    send,
  };
}

export type Client = ReturnType<typeof client>;

const adminToken = () => process.env.ADMIN_TOKEN!;

/** A fresh vendor with one organization, a vendor token and an organization token. */
export async function createTenant(baseUrl: string, name = "tenant") {
  const admin = client(baseUrl, adminToken());
  const vendor = await admin.post("/api/v1/vendors", { name: `${name}-vendor` });
  const vendorId: string = vendor.body.data.id;
  const org = await admin.post(`/api/v1/vendors/${vendorId}/organizations`, { name: `${name}-org` });
  const organizationId: string = org.body.data.id;
  const vendorToken = (await admin.post(`/api/v1/vendors/${vendorId}/api-tokens`, { name: "vendor" })).body.data
    .token as string;
  const orgToken = (await admin.post(`/api/v1/vendors/${vendorId}/api-tokens`, { name: "org", organizationId })).body
    .data.token as string;
  const P = `/api/v1/vendors/${vendorId}/organizations/${organizationId}`;
  return {
    vendorId,
    organizationId,
    P,
    vendorToken,
    orgToken,
    admin,
    org: client(baseUrl, orgToken),
    vendor: client(baseUrl, vendorToken),
  };
}

export type Tenant = Awaited<ReturnType<typeof createTenant>>;
export type TestApi = Awaited<ReturnType<typeof startTestApi>>;

/** An API for a test file with two unrelated tenants, "a" and "b" (isolation checks need both). */
export async function startApiWithTwoTenants() {
  const api = await startTestApi();
  return { api, a: await createTenant(api.url, "a"), b: await createTenant(api.url, "b") };
}

export const toolSchema = (name = "lookup_order") =>
  JSON.stringify({
    name,
    description: "Look up an order",
    parameters: {
      type: "object",
      properties: { orderId: { type: "string", description: "the order number" }, verbose: { type: "boolean" } },
      required: ["orderId"],
    },
  });

/** A SIP credential (at an address nothing answers) and a phone number on it: a caller id for outbound calls. */
export async function createCallerId(tenant: Tenant, phoneNumber = "+15550400000") {
  const credential = { hostname: "sip.example.com", port: 5060, username: "caller-id", password: "p" };
  const credentialId: string = (await tenant.org.post(`${tenant.P}/sip/credentials`, credential)).body.data.id;
  const number = await tenant.org.post(`${tenant.P}/sip/credentials/${credentialId}/phone-numbers`, { phoneNumber });
  return { credentialId, phoneNumberId: number.body.data.id as string };
}

/** A pipeline assistant taking table bookings with a `book_table` tool (its webhook goes nowhere: tests mock it). */
export async function createBookingAssistant(tenant: Tenant, fields: Record<string, unknown> = {}): Promise<string> {
  const strategy = await tenant.org.post(`${tenant.P}/llm-generation-strategies`, {
    name: "pipeline",
    type: "pipeline",
    parameters: {},
  });
  const created = await tenant.org.post(`${tenant.P}/assistants`, {
    name: "Luigi's",
    systemPrompt: "You take table bookings for Luigi's.",
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
    extensions: [
      {
        type: "tool_webhook",
        parameters: { name: "book_table", serverUrl: "http://127.0.0.1:9/never", schema: toolSchema("book_table") },
      },
    ],
    ...fields,
  });
  if (created.status !== 201) throw new Error(`assistant not created: ${JSON.stringify(created.body)}`);
  return created.body.data.id;
}

/** A SIP credential on a trunk nobody runs (127.0.0.1:5099) with one phone number: a caller id for outbound tests. */
export async function createCallerNumber(tenant: Tenant, phoneNumber: string, maxAgentTasks?: number) {
  const credential = await tenant.org.post(`${tenant.P}/sip/credentials`, {
    hostname: "127.0.0.1",
    port: 5099,
    username: `caller-${phoneNumber.slice(1)}`,
    password: "secret",
    ...(maxAgentTasks && { maxAgentTasks }),
  });
  const credentialId: string = credential.body.data.id;
  const number = await tenant.org.post(`${tenant.P}/sip/credentials/${credentialId}/phone-numbers`, { phoneNumber });
  return { credentialId, phoneNumberId: number.body.data.id as string };
}
