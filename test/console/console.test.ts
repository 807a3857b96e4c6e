// The console in a real browser: Debian's chromium driven by playwright-core, with a fake microphone
// that plays espeak-ng speech. It signs in, edits an assistant, talks to it through the bridge (fake
// voice provider), hangs up, and reads the call back: transcript, recording, delivered hook. Metrics
// are scraped before and after. Screenshots of every page go to test-artifacts/console/.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { concatPcm } from "../../src/audio/pcm";
import { encodeWav } from "../../src/audio/wav";
import { createTenant, startTestApi, type TestApi } from "../helpers/api";
import { launchChromium } from "../helpers/chromium";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { silence, speech } from "../helpers/speech";
import { createAssistant, startWorld, type World } from "../bridge/fixtures";
import { scrape, total } from "../metrics/scrape";

const artifacts = join(import.meta.dir, "../../test-artifacts/console");
let world: World;
let worker: TestWorker;
let tools: Receiver;
let api: TestApi;
let browser: BrowserContext;
let page: Page;
let profile: string;
let assistant: Awaited<ReturnType<typeof createAssistant>>;

/** Each step of the set-up says how long it took: on a loaded CI run the whole set-up once timed out silently. */
async function step<T>(name: string, work: Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work;
  console.log(`[console] ${name}: ${Math.round(performance.now() - started)} ms`);
  return result;
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  const { address } = await step("temporal", ensureTemporal());
  [world, worker, tools] = await Promise.all([
    step("world", startWorld()),
    step("hook worker", startWorker({ address, backoffBaseMs: 1_000, env: { OUTBOUND_ALLOW_CIDRS: "127.0.0.1/32" } })),
    startReceiver(),
  ]);
  tools.respond(() => ({ status: 200, body: "Order 42 ships tomorrow." }));
  // the worker may reach 127.0.0.1 only: a hook to 127.0.0.2 is refused, so it fails at once (for Retry)
  // the console's API tells the page where the bridge is
  api = await startTestApi({ CONSOLE_BRIDGE_URL: world.bridge.url });
  assistant = await createAssistant(world, {
    greeting: "Hello, Acme here.",
    tools: [{ name: "lookup_order", serverUrl: `${tools.url}/orders` }],
    extensions: [{ type: "call_analysis", parameters: { schema: '{"type":"object","required":["orderId"]}' } }],
    fake: {
      turns: [
        {
          userSays: "Where is my order forty two?",
          reply: { text: "Checking.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] },
        },
      ],
    },
  });

  // the call's summary request answers with its analysis too
  world.chat.answers.push({
    ...world.chat.summary,
    analysis: { data: { orderId: "42" }, success: true, successReason: "The order was found." },
  });

  // the fake microphone: the question, then silence (chromium loops the file)
  profile = mkdtempSync(join(tmpdir(), "vas-console-chromium-"));
  const mic = join(profile, "mic.wav");
  writeFileSync(
    mic,
    encodeWav(
      concatPcm([silence(1500, 16000), await speech("Where is my order forty two?", 16000), silence(8000, 16000)]),
      16000,
    ),
  );
  browser = await step("chromium", launchChromium(join(profile, "user-data"), mic));
  page = browser.pages()[0] ?? (await browser.newPage());
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([world?.stop(), worker?.kill(), tools?.close(), api?.stop()]);
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });

describe("the console", () => {
  test("sign in, edit an assistant, talk to it, read the call back", async () => {
    const { tenant } = world;
    const bridgeMetrics = () => scrape(`${world.bridge.url.replace(/^ws/, "http")}/metrics`);
    const before = await bridgeMetrics();

    // sign in with the token alone (GET /api/v1/token finds its organization); it stays in sessionStorage only
    await page.goto(`${api.url}/console`);
    await shot("sign-in");
    await page.fill("#token", tenant.orgToken);
    await page.click("#sign-in button[type=submit]");
    await page.waitForSelector(`#assistants-list a[href="#/assistants/${assistant.id}"]`);
    expect(await page.evaluate<number>("localStorage.length")).toBe(0);
    expect(await page.evaluate<string>(`sessionStorage.getItem("vas-console")`)).toContain(tenant.orgToken);
    await shot("assistants");

    // edit the greeting and add a hook through the public API
    await page.click(`#assistants-list a[href="#/assistants/${assistant.id}"]`);
    await page.waitForSelector('[data-field="systemPromptGreeting"]');
    await page.fill('[data-field="systemPromptGreeting"]', "Hello from the console.");
    // the two hooks are rows of the form (test/console/builder.test.ts builds every kind); a third is added
    expect(await page.locator('[data-field="callEventHooks[1].parameters.url"]').inputValue()).toBe(
      `${world.hooks.url}/hooks`,
    );
    await page.click('[data-add="callEventHooks"]');
    await page.selectOption('[data-field="callEventHooks[2].type"]', "call_concluded");
    await page.fill('[data-field="callEventHooks[2].parameters.url"]', "http://127.0.0.2:9/refused");
    await page.click("#save");
    await page.waitForSelector("#save-result:has-text('Saved.')");
    await shot("assistant");
    const saved = await tenant.org.get(`${tenant.P}/assistants/${assistant.id}`);
    expect(saved.body.data.systemPromptGreeting).toBe("Hello from the console.");
    expect(saved.body.data.extensions).toHaveLength(2); // the tool and call_analysis
    expect(saved.body.data.callEventHooks.map((hook: any) => hook.parameters.url)).toContain(
      "http://127.0.0.2:9/refused",
    );

    // talk: the greeting is heard (the fake provider says its scripted one), the fake mic's question is transcribed, the tool runs
    await page.goto(`${api.url}/console#/talk/assistants/${assistant.id}`);
    await page.click("#talk-start");
    // the call's start (microphone, websocket, provider) took 15 s once on a loaded CI machine
    await page.waitForSelector("#talk-status:has-text('in call')", { timeout: 30_000 });
    const during = await bridgeMetrics();
    expect(
      total(during, "vas_calls_active", { transport: "websocket" }) -
        total(before, "vas_calls_active", { transport: "websocket" }),
    ).toBe(1);
    await page.waitForSelector("#transcript .assistant:has-text('Hello, Acme here.')", { timeout: 15_000 });
    await page.waitForSelector("#transcript .user:has-text('Where is my order forty two?')", { timeout: 30_000 });
    // the bridge's tool_call and tool_result notices, as they happen
    await page.waitForSelector(`#transcript .tool:has-text('→ lookup_order({"orderId":"42"})')`, { timeout: 15_000 });
    await page.waitForSelector("#transcript .tool:has-text('← lookup_order: Order 42 ships tomorrow.')", {
      timeout: 15_000,
    });
    await page.waitForSelector("#transcript .assistant:has-text('Order 42 ships tomorrow.')", { timeout: 15_000 });
    await Bun.sleep(1500); // let the reply play out
    await shot("talk");

    // the provider heard the page's microphone; the page played the agent's audio (its analyser saw it)
    const session = world.fakes.at(-1)!.sessions[0]!;
    expect(session.audioBytesReceived).toBeGreaterThan(16000 * 2 * 3);
    expect(Number(await page.getAttribute("#agent-level", "data-peak"))).toBeGreaterThan(0.01);
    expect(tools.requests).toHaveLength(1);

    await page.click("#talk-hangup");
    await page.waitForSelector("#talk-status[data-ended='caller-hangup']", { timeout: 10_000 });
    await shot("talk-ended");

    // the call's page: transcript, tool calls, a playable recording, the delivered hooks
    const list = await tenant.org.get(`${tenant.P}/agent-tasks?assistantId=${assistant.id}`);
    const task = list.body.data[0];
    expect(list.body.data).toHaveLength(1);
    await page.goto(`${api.url}/console#/calls`);
    await page.waitForSelector(`#calls-list a[href="#/calls/${task.id}"]`);
    // filters: this assistant's websocket calls hold it, its SIP calls do not
    await page.selectOption("select[name=owner]", `assistantId:${assistant.id}`);
    await page.selectOption("select[name=transport]", "sip");
    // the unfiltered list stays on the page until the filtered one replaces it
    const unfiltered = await page.$("#calls-list");
    await page.click(".filters button[type=submit]");
    await page.waitForFunction(`location.hash.includes("transport=sip")`);
    await page.waitForFunction((table) => !table?.isConnected, unfiltered);
    await page.waitForSelector("#calls-list");
    expect(await page.locator(`#calls-list a[href="#/calls/${task.id}"]`).count()).toBe(0);
    await page.selectOption("select[name=transport]", "websocket");
    await page.click(".filters button[type=submit]");
    await page.waitForSelector(`#calls-list a[href="#/calls/${task.id}"]`);
    expect(await page.locator("#calls-list tr").count()).toBe(2); // the header and this call
    expect(await page.locator("#calls-list").textContent()).toContain("front desk");
    await shot("calls");
    for (let i = 0; ; i++) {
      await page.goto(`${api.url}/console#/calls/${task.id}`);
      await page.reload();
      await page.waitForSelector("#hook-deliveries");
      const states = page.locator("#hook-deliveries");
      if (
        (await states.locator(".state-SUCCEEDED").count()) === 2 &&
        (await states.locator(".state-FAILED").count()) === 1
      )
        break;
      if (i > 40) throw new Error("the hooks were not delivered");
      await Bun.sleep(500);
    }
    await page.waitForSelector("#call-messages .assistant:has-text('Hello, Acme here.')");
    await page.waitForSelector("#call-messages .user:has-text('Where is my order forty two?')");
    await page.waitForSelector("#call-messages .tool:has-text('lookup_order')");
    await page.waitForSelector('#call-analysis:has-text(\'success · The order was found. · data: {"orderId":"42"}\')');
    await page.waitForSelector("#call-variables:has-text('call_id')");
    // the audio element loaded the recording (fetched with the token) and knows its length
    const playable = `(() => { const a = document.querySelector("#recording"); return a && a.src.startsWith("blob:") && a.readyState >= 1 && a.duration; })()`;
    const recording = await page.waitForFunction(playable, undefined, { timeout: 10_000 });
    expect(Number(await recording.jsonValue())).toBeGreaterThan(3);
    await shot("call");

    // the refused hook failed on its one attempt; Retry starts run 2, which the page then shows
    const failed = page.locator("#hook-deliveries tr", { hasText: "127.0.0.2:9/refused" });
    expect(await failed.textContent()).toContain("run 1 #1");
    await failed.locator("button.retry").click();
    for (let i = 0; !((await failed.textContent()) ?? "").includes("run 2 #1"); i++) {
      if (i > 40) throw new Error("the retry's attempt did not show");
      await Bun.sleep(500);
      await page.reload();
      await page.waitForSelector("#hook-deliveries");
    }
    await shot("call-retried");

    const after = await bridgeMetrics();
    const delta = (name: string, labels: Record<string, string>) =>
      total(after, name, labels) - total(before, name, labels);
    expect(delta("vas_call_setup_seconds_count", { transport: "websocket" })).toBe(1);
    expect(delta("vas_call_duration_seconds_count", { transport: "websocket", status: "completed" })).toBe(1);
    expect(total(after, "vas_calls_active", { transport: "websocket" })).toBe(
      total(before, "vas_calls_active", { transport: "websocket" }),
    );
  }, 180_000);

  test("SIP page: credentials with registration state, live use against maxAgentTasks, numbers", async () => {
    const { tenant } = world;
    const credential = await tenant.org.post(`${tenant.P}/sip/credentials`, {
      hostname: "127.0.0.1",
      port: 5999,
      username: "frontdesk",
      password: "pw",
      maxAgentTasks: 4,
    });
    await tenant.org.post(`${tenant.P}/sip/credentials/${credential.body.data.id}/phone-numbers`, {
      phoneNumber: "+14155550100",
    });
    await page.goto(`${api.url}/console#/sip`);
    await page.reload();
    const row = page.locator("#sip-credentials tr", { hasText: "frontdesk@127.0.0.1:5999" });
    await row.waitFor();
    expect(await row.textContent()).toContain("0 / 4");
    expect(await row.textContent()).toContain("+14155550100");
    await shot("sip");
  });

  test("sign-in: a vendor token with two organizations picks one; the admin token is refused", async () => {
    const tenant = await createTenant(api.url, "console-vendor");
    const second = await tenant.admin.post(`/api/v1/vendors/${tenant.vendorId}/organizations`, { name: "second-org" });
    const tab = await browser.newPage(); // its own sessionStorage: signed out
    try {
      await tab.goto(`${api.url}/console`);
      await tab.fill("#token", process.env.ADMIN_TOKEN!);
      await tab.click("#sign-in button[type=submit]");
      await tab.waitForSelector("#sign-in .error:has-text('vendor or organization token')");

      await tab.fill("#token", tenant.vendorToken);
      await tab.click("#sign-in button[type=submit]");
      await tab.waitForSelector("#organization-id:not([hidden])");
      expect(await tab.locator("#organization-id option").count()).toBe(2);
      await tab.selectOption("#organization-id", second.body.data.id);
      await tab.click("#sign-in button[type=submit]");
      await tab.waitForSelector("#assistants-list");
      const stored = JSON.parse((await tab.evaluate<string>(`sessionStorage.getItem("vas-console")`))!);
      expect(stored).toEqual({
        token: tenant.vendorToken,
        vendorId: tenant.vendorId,
        organizationId: second.body.data.id,
      });
    } finally {
      await tab.close();
    }
  });
});
