// Routing of requests to credentials' user agents, without sockets: plain agents and parsed messages.
import { expect, test } from "bun:test";
import { routeRequest, type RoutableAgent } from "../../src/sip/request-router";
import { splitMessage, type SipMessage } from "../../src/sip/sip-message";

type Agent = RoutableAgent & { name: string };

const agent = (name: string, fields: Partial<Omit<Agent, "name">> = {}): Agent => ({
  name,
  contactUser: `contact-${name}`,
  trunkAddresses: ["10.0.0.1"],
  credential: { port: 5060 },
  numbers: new Set<string>(),
  hasFallback: false,
  owned: false,
  hasDialog: () => false,
  ...fields,
});

const invite = (uri: string, to = "<sip:someone@10.0.0.1>", method = "INVITE"): SipMessage => {
  const message = splitMessage(
    `${method} ${uri} SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.0.1;branch=z9hG4bK1\r\nTo: ${to}\r\nCall-ID: call-1\r\n\r\n`,
  );
  if (!message) throw new Error("bad fixture");
  return message;
};
const from = (address: string, port = 5060) => ({ protocol: "UDP" as const, address, port });
const route = (agents: Agent[], message: SipMessage, peer = from("10.0.0.1")) => {
  const decision = routeRequest(agents, message, peer);
  return "agent" in decision ? decision.agent.name : decision.status;
};

test("our contact user in the Request-URI names the credential", () => {
  const agents = [agent("a", { numbers: new Set(["+15550001"]) }), agent("b")];
  expect(route(agents, invite("sip:contact-b@192.0.2.1:5070"))).toBe("b");
});

test("a dialled number in the Request-URI or in To goes to the credential of the trunk that has it", () => {
  const agents = [
    agent("a", { numbers: new Set(["+15550001", "15550001"]) }),
    agent("b", { numbers: new Set(["+15550002"]) }),
  ];
  expect(route(agents, invite("sip:+15550002@192.0.2.1"))).toBe("b");
  expect(route(agents, invite("sip:192.0.2.1", "<sip:15550001@10.0.0.1>"))).toBe("a");
  // our contact in the Request-URI with the number in To
  expect(route(agents, invite("sip:contact-a@192.0.2.1", "<sip:+15550002@10.0.0.1>"))).toBe("a");
});

test("the trunk's port narrows the choice when one address serves several credentials", () => {
  const agents = [
    agent("a", { numbers: new Set(["+15550001"]), credential: { port: 5060 } }),
    agent("b", { numbers: new Set(["+15550001"]), credential: { port: 5080 } }),
  ];
  expect(route(agents, invite("sip:+15550001@192.0.2.1"), from("10.0.0.1", 5080))).toBe("b");
  expect(route(agents, invite("sip:+15550001@192.0.2.1"), from("10.0.0.1", 5060))).toBe("a");
  // a port no credential names: any credential at the address
  expect(route(agents, invite("sip:+15550001@192.0.2.1"), from("10.0.0.1", 6000))).toBe("a");
});

test("an unknown number goes to a fallback number, the lease holder's first; nothing matches: 404", () => {
  const agents = [agent("a", { hasFallback: true }), agent("b", { hasFallback: true, owned: true }), agent("c")];
  expect(route(agents, invite("sip:+15559999@192.0.2.1"))).toBe("b");
  expect(route([agents[0]!, agents[2]!], invite("sip:+15559999@192.0.2.1"))).toBe("a");
  expect(route([agent("c")], invite("sip:+15559999@192.0.2.1"))).toBe(404);
});

test("credential first: only the credentials whose trunk sent the request are candidates; no trunk: 403", () => {
  const vendorA = agent("a", {
    trunkAddresses: ["10.0.0.1", "10.0.0.11"],
    numbers: new Set(["+15550001"]),
    hasFallback: true,
    owned: true,
  });
  const vendorB = agent("b", { trunkAddresses: ["10.0.0.2"], numbers: new Set(["+15550001"]) });
  const agents = [vendorA, vendorB];
  // the same number on two trunks: each trunk reaches its own credential
  expect(route(agents, invite("sip:+15550001@192.0.2.1"), from("10.0.0.2"))).toBe("b");
  expect(route(agents, invite("sip:+15550001@192.0.2.1"), from("10.0.0.11"))).toBe("a");
  // trunk B cannot reach A's credential by its contact, nor fall back to A's fallback number
  expect(route(agents, invite("sip:contact-a@192.0.2.1"), from("10.0.0.2"))).toBe(404);
  expect(route(agents, invite("sip:+15559999@192.0.2.1"), from("10.0.0.2"))).toBe(404);
  // any other source: refused, whatever it names
  for (const uri of ["sip:contact-a@192.0.2.1", "sip:+15550001@192.0.2.1", "sip:192.0.2.1"]) {
    expect(route(agents, invite(uri), from("10.9.9.9"))).toBe(403);
  }
  expect(route([agent("unresolved", { trunkAddresses: [] })], invite("sip:+15550001@192.0.2.1"))).toBe(403);
});

test("a request inside a dialog goes to the user agent holding it, even one replaced since", () => {
  const replaced = agent("old", { hasDialog: (callId) => callId === "call-1" });
  const current = agent("new");
  const bye = invite("sip:contact-new@192.0.2.1", "<sip:+15550001@10.0.0.1>;tag=abc", "BYE");
  expect(route([current, replaced], bye)).toBe("old");
  // without a To tag it is a new request: the dialog lookup does not apply
  expect(route([current, replaced], invite("sip:contact-new@192.0.2.1"))).toBe("new");
  // a dialog nobody has: routed like any request (the user agent answers 481)
  expect(route([current, agent("other")], bye)).toBe("new");
  // from another address, even inside a dialog: refused
  expect(route([current, replaced], bye, from("10.9.9.9"))).toBe(403);
});
