// The call page shows a transfer: to whom, how (the tool's mode and the transport's way of handing
// over), the tool's outcome and the end. A native websocket call whose fake LLM calls transfer_call.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signInConsole, type TestBrowser } from "../helpers/chromium";
import { startConsoleWorld, stopConsoleWorld } from "./console-world";
import { dialNative } from "../helpers/ws-caller";
import { completedTask, createAssistant, greetThenTransfer, type World } from "../bridge/fixtures";

let world: World;
let browser: TestBrowser;

beforeAll(async () => {
  ({ world, browser } = await startConsoleWorld("transfer"));
}, 90_000);
afterAll(() => stopConsoleWorld({ world, browser }));

test("a transferred call's page says to whom, how and with what outcome", async () => {
  const greeting = "Hello, Acme desk.";
  const assistant = await createAssistant(world, {
    greeting,
    extensions: [
      {
        type: "transfer_call",
        parameters: {
          name: "hand_over",
          destinations: [{ to: "+15550300099", description: "Sales", message: "Connecting you to sales." }],
          mode: "warm",
        },
      },
    ],
    fake: {
      onInstructions: greetThenTransfer(greeting, "hand_over", "+15550300099"),
    },
  });
  const caller = await dialNative(world.bridge.url, {
    assistantId: assistant.id,
    sampleRate: "16000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.waitFor((e) => e.type === "transfer");
  await caller.waitFor((e) => e.type === "ended");
  const task = await completedTask(world, callId);

  const { page } = browser;
  await signInConsole(page, world.api.url, world.tenant.orgToken);
  await page.goto(`${world.api.url}/console#/calls/${task.id}`);
  await page.waitForSelector("#call-transfer");
  const shown = await page.textContent("#call-transfer");
  expect(shown).toContain(
    "+15550300099 (warm, handed to the websocket client): The caller was transferred to +15550300099.",
  );
  expect(shown).toContain("Transferred to +15550300099");
  expect(await page.textContent("#call-facts")).toContain("Ended becausetransferred");
}, 60_000);
