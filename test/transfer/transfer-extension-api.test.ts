// The transfer_call extension through the API: stored as given, every bad parameter a 400 naming it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let a: Tenant;

beforeAll(async () => {
  ({ api, a } = await startApiWithTwoTenants());
});
afterAll(async () => {
  await api.stop();
});

const withTransfer = (parameters: Record<string, unknown>) => ({
  name: "desk",
  extensions: [{ type: "transfer_call", parameters }],
});
const fields = (res: { body: any }) => res.body.errors.map((e: { field: string }) => e.field);
const sales = { to: "+15551230000", description: "Sales team" };

test("a transfer_call extension is stored and read back as given", async () => {
  const parameters = {
    name: "hand_over",
    description: "Hand the caller to a person",
    destinations: [
      sales,
      { to: "sip:support@127.0.0.1:5070", description: "Support", message: "One moment, {{caller_number}}." },
    ],
    mode: "blind",
    method: "refer",
    ringTimeoutSeconds: 20,
    onFailure: "hangup",
  };
  const created = await a.org.post(`${a.P}/assistants`, withTransfer(parameters));
  expect(created.status).toBe(201);
  expect(created.body.data.extensions[0]).toMatchObject({ type: "transfer_call", parameters });
  const read = await a.org.get(`${a.P}/assistants/${created.body.data.id}`);
  expect(read.body.data.extensions[0].parameters).toEqual(parameters);
});

test("bad parameters are a 400 naming the field", async () => {
  const p = "extensions[0].parameters";
  const cases: [Record<string, unknown>, string][] = [
    [{}, `${p}.destinations`],
    [{ destinations: [] }, `${p}.destinations`],
    [
      { destinations: Array.from({ length: 11 }, (_, i) => ({ to: `+1555123000${i}`, description: "x" })) },
      `${p}.destinations`,
    ],
    [{ destinations: [{ to: "5551230000", description: "no plus" }] }, `${p}.destinations[0].to`],
    [{ destinations: [{ to: "+05551230000", description: "leading zero" }] }, `${p}.destinations[0].to`],
    [{ destinations: [{ to: "tel:+15551230000", description: "not sip" }] }, `${p}.destinations[0].to`],
    [{ destinations: [{ to: "sip:desk@169.254.169.254", description: "metadata" }] }, `${p}.destinations[0].to`],
    [{ destinations: [sales, { ...sales, description: "twice" }] }, `${p}.destinations[1].to`],
    [{ destinations: [{ to: "+15551230000" }] }, `${p}.destinations[0].description`],
    [{ destinations: [{ ...sales, extra: 1 }] }, `${p}.destinations[0].extra`],
    [{ destinations: [sales], mode: "cold" }, `${p}.mode`],
    [{ destinations: [sales], method: "bridge" }, `${p}.method`],
    [{ destinations: [sales], ringTimeoutSeconds: 4 }, `${p}.ringTimeoutSeconds`],
    [{ destinations: [sales], ringTimeoutSeconds: 121 }, `${p}.ringTimeoutSeconds`],
    [{ destinations: [sales], ringTimeoutSeconds: "30" }, `${p}.ringTimeoutSeconds`],
    [{ destinations: [sales], onFailure: "retry" }, `${p}.onFailure`],
    [{ destinations: [sales], name: "end_call" }, `${p}.name`],
    [{ destinations: [sales], name: "bad name" }, `${p}.name`],
    [{ destinations: [sales], other: true }, `${p}.other`],
  ];
  for (const [parameters, field] of cases) {
    const res = await a.org.post(`${a.P}/assistants`, withTransfer(parameters));
    expect({ parameters, status: res.status }).toEqual({ parameters, status: 400 });
    expect(fields(res)).toContain(field);
  }
});

test("two transfer tools of the same name are refused; another name is fine", async () => {
  const twice = {
    name: "desk",
    extensions: [
      { type: "transfer_call", parameters: { destinations: [sales] } },
      { type: "transfer_call", parameters: { destinations: [sales] } },
    ],
  };
  const res = await a.org.post(`${a.P}/assistants`, twice);
  expect(res.status).toBe(400);
  expect(fields(res)).toContain("extensions[1].parameters.name");
  twice.extensions[1]!.parameters = { name: "transfer_billing", destinations: [sales] } as never;
  expect((await a.org.post(`${a.P}/assistants`, twice)).status).toBe(201);
});
