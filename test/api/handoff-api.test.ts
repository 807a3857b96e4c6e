// The handoff extension through the API (docs/handoff.md): stored as given on assistants and agents, every
// destination an assistant of the same organization with a unique name, every bad field a 400 naming it,
// an assistant a handoff names not deletable (409) until the handoff lets go of it, the shape in the
// OpenAPI document. Below: the one tool the LLM would see.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";
import { handoffToolsFromExtensions } from "../../src/voice/tools";

let api: TestApi;
let a: Tenant;
let b: Tenant;
let billing: string;
let booking: string;
let otherOrgs: string;

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
  const assistant = async (tenant: Tenant, name: string) => {
    const res = await tenant.org.post(`${tenant.P}/assistants`, { name, systemPrompt: `You are ${name}.` });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  billing = await assistant(a, "Billing");
  booking = await assistant(a, "Booking");
  otherOrgs = await assistant(b, "Billing");
});
afterAll(() => api.stop());

const fields = (res: { body: any }) => res.body.errors.map((e: { field: string }) => e.field);
const handoff = (parameters: Record<string, unknown>) => ({ type: "handoff", parameters });
const to = (assistantId: string, more: Record<string, unknown> = {}) => ({
  assistantId,
  description: "bills and payments",
  ...more,
});
const p = "extensions[0].parameters";

for (const kind of ["assistants", "agents"] as const) {
  describe(kind, () => {
    test("created and updated as given; the defaults are left to the call", async () => {
      const minimal = { destinations: [to(billing)] };
      const created = await a.org.post(`${a.P}/${kind}`, { name: "front desk", extensions: [handoff(minimal)] });
      expect(created.status).toBe(201);
      expect(created.body.data.extensions).toMatchObject([{ type: "handoff", parameters: minimal }]);
      const id = created.body.data.id;
      const everything = {
        name: "route_caller",
        description: "Send the caller where they need to be.",
        destinations: [
          to(billing, { name: "billing", message: "One moment, {{name}}, billing takes over." }),
          to(booking, { description: "tables and times" }),
        ],
        context: "lastMessages",
        maxMessages: 100,
      };
      const extensionId = created.body.data.extensions[0].id;
      const updated = await a.org.put(`${a.P}/${kind}/${id}`, {
        name: "front desk",
        extensions: [{ id: extensionId, ...handoff(everything) }],
      });
      expect(updated.status).toBeLessThan(300);
      const read = await a.org.get(`${a.P}/${kind}/${id}`);
      expect(read.body.data.extensions).toEqual([
        { id: extensionId, type: "handoff", name: null, parameters: everything },
      ]);
      for (const context of ["all", "none"]) {
        const res = await a.org.put(`${a.P}/${kind}/${id}`, {
          name: "front desk",
          extensions: [handoff({ destinations: [to(booking)], context, maxMessages: 1 })],
        });
        expect(res.status).toBeLessThan(300);
      }
      expect((await a.org.delete(`${a.P}/${kind}/${id}`)).status).toBe(200);
    });

    test("an assistant of another organization, or none, is a 400 naming the destination's assistantId", async () => {
      const res = await a.org.post(`${a.P}/${kind}`, {
        name: "front desk",
        extensions: [
          { type: "call_analysis", parameters: { schema: "{}" } },
          handoff({
            destinations: [to(billing), to(otherOrgs, { name: "theirs" }), to(crypto.randomUUID(), { name: "gone" })],
          }),
        ],
      });
      expect(res.status).toBe(400);
      expect(fields(res)).toEqual([
        "extensions[1].parameters.destinations[1].assistantId",
        "extensions[1].parameters.destinations[2].assistantId",
      ]);
    });
  });
}

test("an agent is no destination: destinations are assistants", async () => {
  const agent = await a.org.post(`${a.P}/agents`, { name: "an agent" });
  const res = await a.org.post(`${a.P}/assistants`, {
    name: "front desk",
    extensions: [handoff({ destinations: [to(agent.body.data.id)] })],
  });
  expect(res.status).toBe(400);
  expect(fields(res)).toEqual([`${p}.destinations[0].assistantId`]);
});

test("an assistant cannot hand the caller to itself", async () => {
  const self = await a.org.post(`${a.P}/assistants`, { name: "loop" });
  const id = self.body.data.id;
  const res = await a.org.put(`${a.P}/assistants/${id}`, {
    name: "loop",
    extensions: [handoff({ destinations: [to(billing), to(id, { name: "me" })] })],
  });
  expect(res.status).toBe(400);
  expect(fields(res)).toEqual([`${p}.destinations[1].assistantId`]);
});

test("destination names are unique, the assistant's name counting where none is given", async () => {
  const post = (destinations: unknown[]) =>
    a.org.post(`${a.P}/assistants`, { name: "front desk", extensions: [handoff({ destinations })] });
  const given = await post([to(billing, { name: "desk" }), to(booking, { name: "desk" })]);
  expect(given.status).toBe(400);
  expect(fields(given)).toEqual([`${p}.destinations[1].name`]);
  // "Billing" twice: once given, once the assistant's own name
  const defaulted = await post([to(booking, { name: "Billing" }), to(billing)]);
  expect(defaulted.status).toBe(400);
  expect(fields(defaulted)).toEqual([`${p}.destinations[1].assistantId`]);
  expect((await post([to(billing), to(booking)])).status).toBe(201);
});

test("the tool name is checked against the other tools", async () => {
  const res = await a.org.post(`${a.P}/assistants`, {
    name: "front desk",
    extensions: [
      handoff({ destinations: [to(billing)] }),
      {
        type: "transfer_call",
        parameters: { name: "handoff", destinations: [{ to: "+15550100000", description: "a human" }] },
      },
    ],
  });
  expect(res.status).toBe(400);
  expect(fields(res)).toEqual(["extensions[1].parameters.name"]);
});

// BILLING stands for the Billing assistant, created after the rows are
const BILLING = "billing-assistant";
test.each([
  [{ destinations: [to(BILLING)], extra: 1 }, `${p}.extra`],
  [{ destinations: [to(BILLING, { extra: 1 })] }, `${p}.destinations[0].extra`],
  [{}, `${p}.destinations`],
  [{ destinations: [] }, `${p}.destinations`],
  [{ destinations: Array.from({ length: 11 }, (_, i) => to(BILLING, { name: `d${i}` })) }, `${p}.destinations`],
  [{ destinations: [{ assistantId: BILLING }] }, `${p}.destinations[0].description`],
  [{ destinations: [to("not-a-uuid")] }, `${p}.destinations[0].assistantId`],
  [{ destinations: [to(BILLING, { name: "" })] }, `${p}.destinations[0].name`],
  [{ destinations: [to(BILLING)], name: "has space" }, `${p}.name`],
  [{ destinations: [to(BILLING)], name: "end_call" }, `${p}.name`],
  [{ destinations: [to(BILLING)], context: "some" }, `${p}.context`],
  [{ destinations: [to(BILLING)], maxMessages: 0 }, `${p}.maxMessages`],
  [{ destinations: [to(BILLING)], maxMessages: 101 }, `${p}.maxMessages`],
  [{ destinations: [to(BILLING)], maxMessages: 2.5 }, `${p}.maxMessages`],
  [{ destinations: [to(BILLING)], maxMessages: "20" }, `${p}.maxMessages`],
] as const)("handoff %j is a 400 naming %s", async (parameters, field) => {
  const body = JSON.parse(JSON.stringify(parameters).replaceAll(BILLING, billing));
  const res = await a.org.post(`${a.P}/agents`, { name: "front desk", extensions: [handoff(body)] });
  expect(res.status).toBe(400);
  expect(fields(res)).toContain(field);
});

test("deleting an assistant a handoff names is a 409 saying who uses it; deleted once the handoffs let go", async () => {
  const target = (await a.org.post(`${a.P}/assistants`, { name: "Spanish" })).body.data.id;
  const agent = await a.org.post(`${a.P}/agents`, {
    name: "Front desk agent",
    extensions: [handoff({ destinations: [to(billing), to(target)] })],
  });
  const assistant = await a.org.post(`${a.P}/assistants`, {
    name: "Front desk assistant",
    extensions: [handoff({ destinations: [to(target)] })],
  });
  const refused = await a.org.delete(`${a.P}/assistants/${target}`);
  expect(refused.status).toBe(409);
  expect(refused.body.success).toBe(false);
  expect(refused.body.message).toContain(`agent "Front desk agent" (${agent.body.data.id})`);
  expect(refused.body.message).toContain(`assistant "Front desk assistant" (${assistant.body.data.id})`);
  // another organization's delete of its own assistant is not held by ours
  expect((await b.org.delete(`${b.P}/assistants/${otherOrgs}`)).status).toBe(200);

  expect(
    (await a.org.put(`${a.P}/agents/${agent.body.data.id}`, { name: "Front desk agent", extensions: [] })).status,
  ).toBeLessThan(300);
  expect((await a.org.delete(`${a.P}/assistants/${target}`)).status).toBe(409);
  expect((await a.org.delete(`${a.P}/assistants/${assistant.body.data.id}`)).status).toBe(200);
  expect((await a.org.delete(`${a.P}/assistants/${target}`)).status).toBe(200);
  expect((await a.org.get(`${a.P}/assistants/${target}`)).status).toBe(404);
});

test("the OpenAPI document has the handoff shape with its ranges", async () => {
  const doc = (await client(api.url).get("/swagger/json")).body;
  const shape = doc.components.schemas.ExtensionHandoff;
  expect(shape.properties.type.const).toBe("handoff");
  const parameters = shape.properties.parameters;
  expect(parameters.additionalProperties).toBe(false);
  expect(parameters.properties.destinations).toMatchObject({ minItems: 1, maxItems: 10 });
  expect(parameters.properties.destinations.items.required).toEqual(["assistantId", "description"]);
  expect(parameters.properties.maxMessages).toMatchObject({ minimum: 1, maximum: 100 });
  expect(JSON.stringify(parameters.properties.context)).toContain('"lastMessages"');
  expect(JSON.stringify(doc.paths)).toContain("#/components/schemas/ExtensionHandoff");
});

describe("the tool the LLM sees", () => {
  const names = new Map([
    ["b1", "Billing"],
    ["b2", "Booking"],
  ]);
  const ext = (parameters: Record<string, unknown>) => [{ type: "handoff", parameters }];

  test("one tool, a required destination whose enum is the names and whose description lists each", () => {
    const [built, ...more] = handoffToolsFromExtensions(
      ext({
        destinations: [
          { assistantId: "b1", description: "bills and payments", message: "Billing takes over." },
          { assistantId: "b2", name: "tables", description: "bookings" },
        ],
      }),
      names,
    );
    expect(more).toEqual([]);
    expect(built!.tool.name).toBe("handoff");
    expect(built!.tool.description).toContain("Hand the caller to another assistant");
    expect(built!.tool.parameters).toEqual({
      type: "object",
      properties: {
        destination: {
          type: "string",
          enum: ["Billing", "tables"],
          description: "The assistant to hand the caller to. Billing: bills and payments; tables: bookings",
        },
      },
      required: ["destination"],
    });
    expect(built!.handoff).toEqual({
      destinations: [
        { assistantId: "b1", name: "Billing", description: "bills and payments", message: "Billing takes over." },
        { assistantId: "b2", name: "tables", description: "bookings", message: null },
      ],
      context: "all",
      maxMessages: 20,
    });
  });

  test("its own name, description, context and maxMessages; a destination whose assistant is gone left out", () => {
    const [built] = handoffToolsFromExtensions(
      ext({
        name: "route",
        description: "Route the caller.",
        destinations: [
          { assistantId: "gone", description: "nobody" },
          { assistantId: "b2", description: "bookings" },
        ],
        context: "lastMessages",
        maxMessages: 5,
      }),
      names,
    );
    expect(built!.tool).toMatchObject({ name: "route", description: "Route the caller." });
    expect((built!.tool.parameters as any).properties.destination.enum).toEqual(["Booking"]);
    expect(built!.handoff).toMatchObject({ context: "lastMessages", maxMessages: 5 });
  });

  test("no destination left, or two with one name after a rename: no tool", () => {
    expect(
      handoffToolsFromExtensions(ext({ destinations: [{ assistantId: "gone", description: "x" }] }), names),
    ).toEqual([]);
    const clash = ext({
      destinations: [
        { assistantId: "b1", name: "Booking", description: "x" },
        { assistantId: "b2", description: "y" },
      ],
    });
    expect(handoffToolsFromExtensions(clash, names)).toEqual([]);
    expect(handoffToolsFromExtensions([{ type: "transfer_call", parameters: {} }], names)).toEqual([]);
  });
});
