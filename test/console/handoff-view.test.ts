// The call page shows who spoke when: each handoff as a line on the transcript's timeline, between what
// the front desk said and what billing said; a handoff is not shown as a transfer. A native websocket
// call whose fake Realtime desk hands over as it greets.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signInConsole, type TestBrowser } from "../helpers/chromium";
import { startConsoleWorld, stopConsoleWorld } from "./console-world";
import { dialNative } from "../helpers/ws-caller";
import { completedTask, createAssistant, greetThenTransfer, type World } from "../bridge/fixtures";

let world: World;
let browser: TestBrowser;

beforeAll(async () => {
  ({ world, browser } = await startConsoleWorld("handoff"));
}, 90_000);
afterAll(() => stopConsoleWorld({ world, browser }));

test("a handed-over call's transcript has the handoff where billing took the call", async () => {
  const greeting = "Hello, Acme desk.";
  const billing = await createAssistant(world, { name: "billing", greeting: "Billing here." });
  const desk = await createAssistant(world, {
    greeting,
    extensions: [
      {
        type: "handoff",
        parameters: {
          destinations: [{ assistantId: billing.id, name: "bills", description: "bills", message: "One moment." }],
        },
      },
    ],
    fake: { onInstructions: greetThenTransfer(greeting, "handoff", "bills") },
  });
  const caller = await dialNative(world.bridge.url, {
    assistantId: desk.id,
    sampleRate: "16000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.waitForAgentSaid("Billing here.");
  caller.sendJson({ type: "hangup" });
  await caller.closed;
  const task = await completedTask(world, callId);

  const { page } = browser;
  await signInConsole(page, world.api.url, world.tenant.orgToken);
  await page.goto(`${world.api.url}/console#/calls/${task.id}`);
  await page.waitForSelector("#call-messages .msg.handoff");
  const lines = await page.$$eval("#call-messages .msg", (els) => els.map((e) => e.textContent ?? ""));
  const at = (text: string) => lines.findIndex((l) => l.includes(text));
  expect(lines[at("handed the caller")]).toStartWith("⇄ front desk handed the caller to billing (bills) at ");
  expect(at("Hello, Acme desk.")).toBeLessThan(at("handed the caller"));
  expect(at("One moment.")).toBeLessThan(at("handed the caller"));
  expect(at("handed the caller")).toBeLessThan(at("Billing here."));
  // the handoff's destination argument does not make it a transfer
  expect(await page.$("#call-transfer")).toBeNull();
}, 60_000);
