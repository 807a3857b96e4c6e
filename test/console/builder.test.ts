// Issue 43: the console builds an assistant from nothing, in Chromium (playwright-core,
// test/helpers/chromium.ts) against the bridge with a fake Realtime provider. An empty organization is
// shown what to make first; it makes a strategy and an assistant with one of each extension type and a
// hook, every field through forms generated from the API's OpenAPI document (a 400 shown on its field),
// and ends on the assistant's Talk page, where it talks to it. Then it adds a handoff to a second
// assistant and saves without losing the write-only secrets, and a delete's 409 is explained. Screenshots:
// test-artifacts/console/builder-*.png.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { createDb } from "../../src/db/client";
import { callEventHooks, extensions } from "../../src/db/schema";
import { createTenant, startTestApi, type Tenant, type TestApi } from "../helpers/api";
import { openBrowser, type TestBrowser } from "../helpers/chromium";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { startWorld, type World } from "../bridge/fixtures";

const artifacts = join(import.meta.dir, "../../test-artifacts/console");
const database = createDb(process.env.DATABASE_URL!, { max: 1 });
let world: World;
let api: TestApi;
let tenant: Tenant;
let browser: TestBrowser;
let page: Page;
let context: Receiver;
let model: string;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  [world, context] = await Promise.all([startWorld(), startReceiver()]);
  context.respond(() => ({ status: 200, body: "{}", headers: { "content-type": "application/json" } }));
  model = world.realtime.add({ onInstructions: () => ({ text: "Hello, Acme here." }) }).model;
  // the console's API tells the page where the bridge is
  api = await startTestApi({ CONSOLE_BRIDGE_URL: world.bridge.url });
  tenant = await createTenant(api.url, "builder");
  browser = await openBrowser("builder");
  page = browser.page;
  page.setDefaultTimeout(10_000);
  page.on("dialog", (dialog) => void dialog.accept()); // deletes ask first
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([world?.stop(), api?.stop(), context?.close()]);
  await database.close();
});

const shot = (name: string) => page.screenshot({ path: join(artifacts, `builder-${name}.png`), fullPage: true });
/** The input the API calls `field` (data-field is its full path). */
const field = (name: string) => page.locator(`[data-field="${name}"]`);
const stored = async (id: string) => (await tenant.org.get(`${tenant.P}/assistants/${id}`)).body.data;
const secretsOf = async (id: string) => ({
  extensions: (await database.db.select().from(extensions).where(eq(extensions.assistantId, id)))
    .filter((e) => e.secretEncrypted)
    .map((e) => e.secretEncrypted),
  hooks: (await database.db.select().from(callEventHooks).where(eq(callEventHooks.assistantId, id))).map(
    (h) => h.secretEncrypted,
  ),
});

/** Adds a row to the list at `list` and chooses its `type`; its fields are then at `${list}[i]`. */
async function addRow(list: string, i: number, type: string) {
  await page.click(`[data-add="${list}"]`);
  await field(`${list}[${i}].type`).selectOption(type);
}

let frontDesk: string;
let strategyId: string;

describe("building an assistant from an empty organization", () => {
  test("first run: a strategy, an assistant with every extension type and a hook, then Talk", async () => {
    await page.goto(`${api.url}/console`);
    await page.fill("#token", tenant.orgToken);
    await page.click("#sign-in button[type=submit]");
    await page.waitForSelector("#first-run");
    // step 2 has no link before there is a strategy
    expect(await page.locator("#first-assistant").count()).toBe(0);
    await shot("first-run");

    // the strategy: the form follows the chosen type (openai_realtime's own fields)
    await page.click("#first-strategy");
    await field("type").selectOption("openai_realtime");
    expect(await field("parameters.transcriptionModel").count()).toBe(1);
    expect(await field("parameters.stt.model").count()).toBe(0);
    // ranges come from the schema: the browser holds temperature to 0-2
    expect(await field("parameters.temperature").getAttribute("max")).toBe("2");
    await field("name").fill("Realtime");
    await field("parameters.model").fill(model);
    await field("parameters.vad.stopDuration").fill("400");
    await field("parameters.voice.voiceId").fill("nonesuch");
    await page.click("#save");
    // the API's 400 on its field: outlined, with its message
    await page.waitForSelector('[data-field="parameters.voice.voiceId"].invalid');
    expect(await page.locator('[data-error-for="parameters.voice.voiceId"]').textContent()).toContain(
      "not a Realtime voice",
    );
    await shot("strategy-400");
    await field("parameters.voice.voiceId").fill("alloy");
    await page.click("#save");
    await page.waitForSelector("#first-run li.done");
    const strategies = (await tenant.org.get(`${tenant.P}/llm-generation-strategies`)).body.data;
    expect(strategies).toHaveLength(1);
    strategyId = strategies[0].id;
    expect(strategies[0]).toMatchObject({
      name: "Realtime",
      type: "openai_realtime",
      parameters: { model, vad: { stopDuration: 400 }, voice: { voiceId: "alloy" } },
    });

    // the assistant, with one of each extension type but handoff (which needs another assistant) and a hook
    await page.click("#first-assistant");
    await field("name").fill("Front desk");
    await field("systemPrompt").fill("You are the Acme front desk.");
    await field("systemPromptGreeting").fill("Hello, Acme here.");
    await field("llmAudioContentGenerationStrategyId").selectOption(strategyId);

    await addRow("extensions", 0, "tool_webhook");
    await field("extensions[0].parameters.name").fill("lookup_order");
    await field("extensions[0].parameters.serverUrl").fill("not a url");
    // the tool's OpenAI function as fields, its arguments as rows, not a JSON string
    await field("extensions[0].parameters.schema.name").fill("lookup_order");
    await field("extensions[0].parameters.schema.description").fill("Look up an order");
    await page.click('[data-add="extensions[0].parameters.schema.parameters.properties"]');
    await field("extensions[0].parameters.schema.parameters.properties[0].name").fill("orderId");
    await field("extensions[0].parameters.schema.parameters.properties[0].type").selectOption("string");
    await field("extensions[0].parameters.schema.parameters.properties[0].description").fill("the order number");
    await page.locator('[data-field="extensions[0].parameters.schema.parameters.properties"] .field-required').check();
    // labels are the API's names, by path within the extension
    expect(await page.locator(".field-name", { hasText: /^parameters\.serverUrl$/ }).count()).toBe(1);

    await addRow("extensions", 1, "knowledge_base");
    await field("extensions[1].parameters.url").fill("http://127.0.0.1:9/search");
    await field("extensions[1].parameters.authToken").fill("kb-s3cret-token");

    await addRow("extensions", 2, "transfer_call");
    await page.click('[data-add="extensions[2].parameters.destinations"]');
    await field("extensions[2].parameters.destinations[0].to").fill("+15550100200");
    await field("extensions[2].parameters.destinations[0].description").fill("the billing desk");
    await field("extensions[2].parameters.mode").selectOption("warm");

    await addRow("extensions", 3, "call_context");
    await field("extensions[3].parameters.url").fill(`${context.url}/context`);

    await addRow("extensions", 4, "call_analysis");
    await page.click('[data-add="extensions[4].parameters.schema.properties"]');
    await field("extensions[4].parameters.schema.properties[0].name").fill("orderId");
    await field("extensions[4].parameters.schema.properties[0].type").selectOption("string");
    await field("extensions[4].parameters.prompt").fill("Which order the caller asked about");

    await addRow("extensions", 5, "turn_taking");
    await field("extensions[5].parameters.interruption.minDurationMs").fill("400");

    await addRow("callEventHooks", 0, "call_concluded");
    await field("callEventHooks[0].parameters.url").fill("http://127.0.0.1:9/hooks");
    await field("callEventHooks[0].parameters.secret").fill("whsec-hook-s3cret");
    await page.click('[data-add="callEventHooks[0].parameters.headers"]');
    await page.locator('[data-field="callEventHooks[0].parameters.headers"] .pair-key').fill("X-Team");
    await page.locator('[data-field="callEventHooks[0].parameters.headers"] .pair-value').fill("support");

    await page.click("#save");
    await page.waitForSelector('[data-field="extensions[0].parameters.serverUrl"].invalid');
    expect(await page.locator('[data-error-for="extensions[0].parameters.serverUrl"]').count()).toBe(1);
    expect((await tenant.org.get(`${tenant.P}/assistants`)).body.data).toHaveLength(0);
    await shot("assistant-400");
    await field("extensions[0].parameters.serverUrl").fill("http://127.0.0.1:9/orders");
    await page.click("#save");

    // the first assistant's save ends on its Talk page, and it talks
    await page.waitForSelector("#talk-start");
    frontDesk = /#\/talk\/assistants\/([\w-]+)/.exec(page.url())![1]!;
    await page.click("#talk-start");
    await page.waitForSelector("#transcript .assistant:has-text('Hello, Acme here.')", { timeout: 30_000 });
    await shot("talk");
    await page.click("#talk-hangup");
    await page.waitForSelector("#talk-status[data-ended]");

    const a = await stored(frontDesk);
    expect(a.extensions.map((e: any) => e.type)).toEqual([
      "tool_webhook",
      "knowledge_base",
      "transfer_call",
      "call_context",
      "call_analysis",
      "turn_taking",
    ]);
    const [tool, knowledge, transfer, callContext, analysis, turnTaking] = a.extensions.map((e: any) => e.parameters);
    expect(JSON.parse(tool.schema)).toEqual({
      name: "lookup_order",
      description: "Look up an order",
      parameters: {
        type: "object",
        properties: { orderId: { type: "string", description: "the order number" } },
        required: ["orderId"],
      },
    });
    expect(knowledge).toEqual({ url: "http://127.0.0.1:9/search" });
    expect(transfer).toEqual({ destinations: [{ to: "+15550100200", description: "the billing desk" }], mode: "warm" });
    expect(callContext).toEqual({ url: `${context.url}/context` });
    expect(JSON.parse(analysis.schema)).toEqual({ type: "object", properties: { orderId: { type: "string" } } });
    expect(analysis.prompt).toBe("Which order the caller asked about");
    expect(turnTaking).toEqual({ interruption: { minDurationMs: 400 } });
    expect(a.callEventHooks).toEqual([
      expect.objectContaining({
        type: "call_concluded",
        parameters: { url: "http://127.0.0.1:9/hooks", headers: { "X-Team": "support" } },
      }),
    ]);
    const secrets = await secretsOf(frontDesk);
    expect(secrets.extensions).toHaveLength(1);
    expect(secrets.hooks).toHaveLength(1);
    expect(secrets.hooks[0]).toBeTruthy();
    // never in the page or an answer
    expect(JSON.stringify(a)).not.toContain("s3cret");
  }, 120_000);

  test("a handoff to a second assistant; saving keeps the write-only secrets", async () => {
    await page.goto(`${api.url}/console#/assistants`);
    await page.waitForSelector("#new-assistant");
    expect(await page.locator("#first-run").count()).toBe(0);
    await page.click("#new-assistant");
    await field("name").fill("Billing");
    await page.click("#save");
    await page.waitForSelector("#talk-link");
    const billing = /#\/assistants\/([\w-]+)/.exec(page.url())![1]!;

    const before = await secretsOf(frontDesk);
    await page.goto(`${api.url}/console#/assistants/${frontDesk}`);
    await page.waitForSelector("#talk-link");
    // the stored values are in the form; secrets are not
    expect(await field("extensions[0].parameters.schema.parameters.properties[0].name").inputValue()).toBe("orderId");
    expect(await field("extensions[1].parameters.authToken").inputValue()).toBe("");
    expect(await field("callEventHooks[0].parameters.secret").inputValue()).toBe("");
    await field("systemPromptGreeting").fill("Hello again, Acme here.");
    await addRow("extensions", 6, "handoff");
    await page.click('[data-add="extensions[6].parameters.destinations"]');
    await field("extensions[6].parameters.destinations[0].assistantId").selectOption(billing);
    await field("extensions[6].parameters.destinations[0].description").fill("billing questions");
    // the raw JSON of the analysis schema is one click away, and back
    await page.locator('[data-field="extensions[4].parameters.schema"] .raw-toggle').click();
    expect(
      JSON.parse(await page.locator('[data-field="extensions[4].parameters.schema"] .raw-json').inputValue()),
    ).toEqual({
      type: "object",
      properties: { orderId: { type: "string" } },
    });
    await page.locator('[data-field="extensions[4].parameters.schema"] .raw-toggle').click();
    await page.click("#save");
    await page.waitForSelector("#save-result:has-text('Saved.')");
    await shot("assistant-saved");

    const a = await stored(frontDesk);
    expect(a.systemPromptGreeting).toBe("Hello again, Acme here.");
    expect(a.extensions.map((e: any) => e.type)).toContain("handoff");
    expect(a.extensions.at(-1).parameters.destinations).toEqual([
      { assistantId: billing, description: "billing questions" },
    ]);
    expect(await secretsOf(frontDesk)).toEqual(before);

    // a delete's 409, in words: what uses the thing
    await page.goto(`${api.url}/console#/assistants/${billing}`);
    await page.click("#delete");
    await page.waitForSelector("#save-result[data-conflict]");
    expect(await page.textContent("#save-result")).toContain("in use by “Front desk” (assistant)");
    await page.goto(`${api.url}/console#/strategies/${strategyId}`);
    await page.click("#delete");
    await page.waitForSelector("#save-result[data-conflict]");
    expect(await page.textContent("#save-result")).toContain("in use by “Front desk” (assistant)");
    await shot("delete-409");
    expect((await tenant.org.get(`${tenant.P}/llm-generation-strategies/${strategyId}`)).status).toBe(200);
  }, 60_000);

  test("SIP: a credential (write-only password) and a phone number, 400s on their fields, a 409 explained, deleted", async () => {
    await page.goto(`${api.url}/console#/sip`);
    await page.click("#new-credential");
    await field("hostname").fill("not a host!");
    await field("port").fill("5999");
    await field("username").fill("frontdesk");
    await field("password").fill("sip-s3cret");
    await page.click("#save");
    await page.waitForSelector('[data-field="hostname"].invalid');
    expect(await page.locator('[data-error-for="hostname"]').count()).toBe(1);
    await field("hostname").fill("127.0.0.1");
    await field("port").fill("5999");
    await field("username").fill("frontdesk");
    await field("password").fill("sip-s3cret");
    await field("maxAgentTasks").fill("4");
    await page.click("#save");
    await page.waitForSelector("#registration");
    const credentialId = /#\/sip\/([\w-]+)/.exec(page.url())![1]!;
    await page.click("#new-number");
    await field("phoneNumber").fill("call me");
    await page.click("#save");
    await page.waitForSelector('[data-field="phoneNumber"].invalid');
    await field("phoneNumber").fill("+1 415 555 0100");
    await page.click("#save");
    await page.waitForSelector("#phone-numbers a:has-text('+14155550100')");
    // the Front desk answers on it: its delete is a 409, explained
    const [number] = (await tenant.org.get(`${tenant.P}/sip/credentials/${credentialId}/phone-numbers`)).body.data;
    const desk = await stored(frontDesk);
    const { id: _, ...body } = desk;
    expect(
      (await tenant.org.put(`${tenant.P}/assistants/${frontDesk}`, { ...body, telephoneNumberId: number.id })).status,
    ).toBe(200);
    await page.click("#phone-numbers a");
    await page.click("#delete");
    await page.waitForSelector("#save-result[data-conflict]");
    expect(await page.textContent("#save-result")).toContain("in use by “Front desk” (assistant)");
    // the assistant's form shows the number as its telephoneNumberId; cleared there, the number can go
    await page.goto(`${api.url}/console#/assistants/${frontDesk}`);
    expect(await field("telephoneNumberId").inputValue()).toBe(number.id);
    await field("telephoneNumberId").selectOption("");
    await page.click("#save");
    await page.waitForSelector("#save-result:has-text('Saved.')");
    expect((await stored(frontDesk)).telephoneNumberId).toBeNull();
    await page.goto(`${api.url}/console#/sip/${credentialId}`);
    await page.goto(`${api.url}/console#/sip`);
    const row = page.locator("#sip-credentials tr", { hasText: "frontdesk@127.0.0.1:5999" });
    expect(await row.textContent()).toContain("0 / 4");
    expect(await row.textContent()).toContain("+14155550100");
    expect(await row.locator(".registration").textContent()).toBe("not taken by a bridge yet");
    await shot("sip");

    await page.click(`#sip-credentials a[href="#/sip/${credentialId}"]`);
    await page.click("#phone-numbers a");
    await page.click("#delete");
    await page.waitForSelector("#new-number");
    await page.click("#delete");
    await page.waitForSelector("#new-credential");
    expect((await tenant.org.get(`${tenant.P}/sip/credentials`)).body.data).toHaveLength(0);
  }, 60_000);
});
