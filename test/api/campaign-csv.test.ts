// Issue 40, item 9: a text/csv campaign's other fields come in the query, where every value is a
// string; only the fields the schema types as integers become numbers, JSON fields are parsed, and a
// name of digits stays the name it is.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createCallerId, createTenant, startTestApi, type Tenant, type TestApi } from "../helpers/api";
import { ensureTemporal } from "../helpers/temporal";

let api: TestApi;
let a: Tenant;
let assistantId: string;

beforeAll(async () => {
  // campaigns signal their workflow on creation: a real server answers at once (nothing runs it here)
  api = await startTestApi({ TEMPORAL_ADDRESS: (await ensureTemporal()).address });
  a = await createTenant(api.url, "campaign-csv");
  const { phoneNumberId } = await createCallerId(a);
  assistantId = (await a.org.post(`${a.P}/assistants`, { name: "csv", telephoneNumberId: phoneNumberId })).body.data.id;
}, 120_000);
afterAll(() => api.stop());

const postCsv = (query: Record<string, string>) =>
  a.org.post(`${a.P}/campaigns?${new URLSearchParams({ assistantId, ...query })}`, "to\n+15550400001\n", {
    "content-type": "text/csv",
  });

test("a campaign named with digits keeps its name; integer fields still become numbers", async () => {
  for (const name of ["2025", "007"]) {
    const res = await postCsv({ name, maxConcurrentCalls: "2", ringTimeoutSeconds: "45" });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ name, maxConcurrentCalls: 2, ringTimeoutSeconds: 45 });
  }
});

test("query values keep the types the body has: JSON objects parsed, other strings as given", async () => {
  const res = await postCsv({
    name: "typed",
    voicemail: JSON.stringify({ action: "leave_message", message: "1234" }),
    retry: JSON.stringify({ maxAttempts: 2 }),
  });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({
    voicemail: { action: "leave_message", message: "1234" },
    retry: { maxAttempts: 2 },
  });
  // an integer field that is no integer is still a 400 naming it
  const wrong = await postCsv({ name: "x", maxConcurrentCalls: "two" });
  expect(wrong.status).toBe(400);
  expect(wrong.body.errors[0].field).toBe("maxConcurrentCalls");
});
