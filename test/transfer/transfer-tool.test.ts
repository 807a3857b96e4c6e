// What the LLM sees of a transfer_call extension, and how a NOTIFY's sipfrag is read.
import { expect, test } from "bun:test";
import { sipfragStatus } from "../../src/sip/refer-transfer";
import { transferToolsFromExtensions } from "../../src/voice/tools";

test("one tool with a destination enum of the to values, their descriptions listed, defaults filled", () => {
  const [tool, ...rest] = transferToolsFromExtensions([
    { type: "tool_webhook", parameters: { name: "x" } },
    {
      type: "transfer_call",
      parameters: {
        destinations: [
          { to: "+15551230000", description: "Sales" },
          { to: "sip:support@example.com", description: "Support", message: "Hold on, {{caller_number}}." },
        ],
      },
    },
  ]);
  expect(rest).toEqual([]);
  expect(tool!.tool.name).toBe("transfer_call");
  const destination = (tool!.tool.parameters as any).properties.destination;
  expect(destination.enum).toEqual(["+15551230000", "sip:support@example.com"]);
  expect(destination.description).toContain("+15551230000: Sales");
  expect(destination.description).toContain("sip:support@example.com: Support");
  expect((tool!.tool.parameters as any).required).toEqual(["destination"]);
  expect(tool!.transfer).toEqual({
    destinations: [
      { to: "+15551230000", description: "Sales", message: "Transferring your call now." },
      { to: "sip:support@example.com", description: "Support", message: "Hold on, {{caller_number}}." },
    ],
    mode: "blind",
    method: "refer",
    ringTimeoutMs: 30_000,
    onFailure: "return",
  });
});

test("a named tool keeps its name, description and settings", () => {
  const [tool] = transferToolsFromExtensions([
    {
      type: "transfer_call",
      parameters: {
        name: "hand_over",
        description: "Give the caller to billing",
        destinations: [{ to: "+15551230000", description: "Billing" }],
        mode: "warm",
        method: "dial",
        ringTimeoutSeconds: 12,
        onFailure: "hangup",
      },
    },
  ]);
  expect(tool!.tool).toMatchObject({ name: "hand_over", description: "Give the caller to billing" });
  expect(tool!.transfer).toMatchObject({ mode: "warm", method: "dial", ringTimeoutMs: 12_000, onFailure: "hangup" });
});

test("a sipfrag's status line", () => {
  expect(sipfragStatus("SIP/2.0 100 Trying\r\n")).toBe(100);
  expect(sipfragStatus("SIP/2.0 200 OK")).toBe(200);
  expect(sipfragStatus("  SIP/2.0 486 Busy Here\r\nContent-Length: 0")).toBe(486);
  expect(sipfragStatus("")).toBeNull();
  expect(sipfragStatus("HTTP/1.1 200 OK")).toBeNull();
});
