// SIP ingress, credential first: an INVITE reaches a credential only from that credential's trunk (its
// source address among the addresses of the credential's registrar host), else 403, whatever
// Request-URI it carries. Two vendors register the same number on two trunks (Kamailio on 127.0.0.1
// and on 127.0.0.2): each trunk's calls reach its own vendor's assistant. A third address (127.0.0.3)
// is nobody's trunk.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Trunk } from "./helpers/kamailio";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { runSipp, uacCallVars } from "./helpers/sipp";

let world: SipWorld;
let trunkB: Trunk;
let bridge: Awaited<ReturnType<SipWorld["startBridge"]>>;
let vendorB: Awaited<ReturnType<SipWorld["otherVendor"]>>;
const shared = "+15550500001";
const assistants = { a: "", b: "", contact: "" };
const credentials = { a: "", b: "" };

beforeAll(async () => {
  world = await startSipWorld({ alpha: "alphapass" }, { [shared]: "alpha", "15550500002": "alpha;contact" });
  trunkB = await world.startTrunk({ beta: "betapass" }, { [shared]: "beta" }, "127.0.0.2");
  vendorB = await world.otherVendor("sip-ingress-b", trunkB);
  credentials.a = await world.createCredential("alpha", "alphapass");
  credentials.b = await vendorB.createCredential("beta", "betapass");
  const numberA = await world.createNumber(credentials.a, shared);
  const contactNumber = await world.createNumber(credentials.a, "15550500002");
  const numberB = await vendorB.createNumber(credentials.b, shared);
  assistants.a = (await world.createAssistant({ numberId: numberA, greeting: "Alpha here." })).id;
  assistants.b = (await vendorB.createAssistant({ numberId: numberB, greeting: "Beta here." })).id;
  assistants.contact = (await world.createAssistant({ numberId: contactNumber, greeting: "Alpha again." })).id;
  bridge = await world.startBridge("ingress");
  await world.registered(credentials.a);
  await vendorB.registered(credentials.b);
}, 60_000);
afterAll(() => world?.stop());

const callVars = uacCallVars(9, 500, { callMs: 500 });

test("the same number registered by two vendors on two trunks: each trunk's call reaches its own vendor", async () => {
  const routes = [
    { trunk: world.trunk, assistantId: assistants.a, tasksOf: world.tasks },
    { trunk: trunkB, assistantId: assistants.b, tasksOf: vendorB.tasks },
  ];
  for (const { trunk, assistantId, tasksOf } of routes) {
    const result = await runSipp({
      scenario: "uac-call.xml",
      trunkHost: trunk.host,
      trunkPort: trunk.port,
      service: shared,
      localHost: trunk.host,
      vars: callVars,
    });
    expect(result.code).toBe(0);
    expect(result.logs.join("\n")).toContain("ANSWERED");
    const task = await eventually(
      async () => (await tasksOf((t) => t.assistantId === assistantId && t.status === "completed"))[0],
      "the call on the right vendor",
    );
    expect(task.transport).toMatchObject({ calledNumber: shared });
  }
  // vendor B's trunk naming vendor A's registered contact (or A's number on B's trunk, had B none)
  // does not reach vendor A
  const contactA = bridge.agents.get(credentials.a)?.contactUser;
  expect(contactA).toBeDefined();
  const capture = await runSipp({
    scenario: "uac-call.xml",
    trunkHost: "127.0.0.1",
    trunkPort: bridge.sipPort,
    service: contactA!,
    localHost: trunkB.host,
    vars: callVars,
  });
  expect(capture.logs.join("\n")).toContain("REFUSED 404");
  // neither vendor saw the other's call
  expect((await world.tasks((t) => t.assistantId === assistants.a)).length).toBe(1);
  expect((await vendorB.tasks((t) => t.assistantId === assistants.b)).length).toBe(1);
}, 60_000);

test("the Request-URI forms trunks use, from the trunk's address: the contact with the number in To", async () => {
  // Kamailio leaves our registered contact in the Request-URI for this number; the number is in To
  const result = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: world.trunk.port,
    service: "15550500002",
    vars: callVars,
  });
  expect(result.logs.join("\n")).toContain("ANSWERED");
  await eventually(
    async () => (await world.tasks((t) => t.assistantId === assistants.contact && t.status === "completed"))[0],
    "the contact-form call",
  );
  // straight to the bridge with the dialled number in the Request-URI, from the trunk's address
  const direct = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: bridge.sipPort,
    service: shared,
    vars: callVars,
  });
  expect(direct.logs.join("\n")).toContain("ANSWERED");
}, 30_000);

test("an INVITE from an address that is no credential's trunk gets 403, with a number or with a registered contact", async () => {
  const before = (await world.tasks()).length + (await vendorB.tasks()).length;
  const contact = bridge.agents.get(credentials.a)?.contactUser;
  expect(contact).toBeDefined();
  // the three INVITEs at once: each is refused on its own
  const results = await Promise.all(
    [shared, contact!, "15550500002"].map((service) =>
      runSipp({ scenario: "uac-call.xml", trunkPort: bridge.sipPort, service, localHost: "127.0.0.3", vars: callVars }),
    ),
  );
  for (const result of results) expect(result.logs.join("\n")).toContain("REFUSED 403");
  expect((await world.tasks()).length + (await vendorB.tasks()).length).toBe(before);
}, 30_000);
