// The console's Tests page in a real browser (Debian's chromium, playwright-core): a scripted scenario
// is made through the form (a tool mock, one criterion that passes and one that fails; a bad pattern
// first, whose field the form marks), edited, run against a pipeline assistant by the real worker
// through the bridge (fake LLM), followed live until its result is final, and read back: verdicts as
// the API has them, the transcript, the call's own page; then deleted. Screenshots: test-artifacts/console/.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { scriptedReplies } from "../fakes/chat-completions-server";
import { createBookingAssistant } from "../helpers/api";
import { launchChromium } from "../helpers/chromium";
import type { TestWorker } from "../helpers/temporal";
import type { World } from "../bridge/fixtures";
import { startRunWorld } from "../testing/run-world";

const artifacts = join(import.meta.dir, "../../test-artifacts/console");
let world: World;
let worker: TestWorker;
let browser: BrowserContext;
let page: Page;
let profile: string;
let assistantId: string;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  // the worker runs the test-run workflow and places its calls through this world's bridge
  ({ world, worker } = await startRunWorld());
  const { tenant } = world;
  assistantId = await createBookingAssistant(tenant, { systemPromptGreeting: "Luigi's, how can I help?" });
  profile = mkdtempSync(join(tmpdir(), "vas-tests-page-chromium-"));
  browser = await launchChromium(join(profile, "user-data"));
  page = browser.pages()[0] ?? (await browser.newPage());
  // signed in once: the session lives in this tab's sessionStorage for every test
  await page.goto(`${world.api.url}/console`);
  await page.fill("#token", tenant.orgToken);
  await page.click("#sign-in button[type=submit]");
  await page.waitForSelector("#assistants-list");
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([worker?.kill(), world?.stop()]);
  if (profile) rmSync(profile, { recursive: true, force: true });
});

// a test that holds the model's reply leaves no delay to the next
afterEach(() => {
  world.chat.firstTokenDelayMs = 0;
});

const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });

describe("the Tests page", () => {
  test("a scenario made in the form, run, followed live, its verdicts and its call", async () => {
    const { tenant } = world;
    // the caller's one turn: the LLM books (the mock answers), then quotes the tool's result
    world.chat.reply = scriptedReplies([
      { toolCalls: [{ name: "book_table", arguments: { people: 2, time: "19:00" } }] },
    ]);

    await page.goto(`${world.api.url}/console#/assistants`);
    await page.waitForSelector("#assistants-list");
    await page.click("#nav a[href='#/tests']");
    await page.click("#new-scenario");
    await page.waitForSelector("#scenario-form");

    await page.fill("#scenario-name", "books a table");
    await page.fill("#scenario-tags", "booking, smoke");
    await page.fill(".turns .turn-text", "A table for two at seven.");
    // a mock for book_table when people is 2; its output JSON, held back so the page sees the run going
    await page.click(".mocks-add");
    const mock = page.locator(".mock");
    await mock.locator(".mock-tool").fill("book_table");
    await mock.locator(".pairs-add").click();
    await mock.locator(".pair-key").fill("people");
    await mock.locator(".pair-value").fill("2");
    await mock.locator(".mock-output").fill('{"ok": true, "table": 12}');
    await mock.locator(".mock-delay").fill("4000");
    // the first criterion (the form starts with one): the tool was called with people 2
    const first = page.locator(".criterion").nth(0);
    await first.locator(".criterion-name").fill("booked");
    await first.locator(".criterion-type").selectOption("toolCalled");
    await first.locator("input[name=tool]").fill("book_table");
    await first.locator(".pairs-add").click();
    await first.locator(".pair-key").fill("people");
    await first.locator(".pair-value").fill("2");
    // the second: the agent says "ciao" (it never does), with a pattern that does not compile at first
    await page.click(".criteria-add");
    const second = page.locator(".criterion").nth(1);
    await second.locator(".criterion-name").fill("says ciao");
    await second.locator(".criterion-type").selectOption("said");
    await second.locator("input[name=pattern]").fill("ciao(");
    await second.locator("select[name=by]").selectOption("agent");

    await page.click("#scenario-save");
    await page.waitForSelector("#scenario-result.error:has-text('criteria[1].pattern')");
    expect(await second.locator("input[name=pattern]").getAttribute("class")).toContain("invalid");
    await shot("tests-scenario-invalid");
    await second.locator("input[name=pattern]").fill("ciao");
    await page.click("#scenario-save");
    await page.waitForFunction(`/^#\\/tests\\/scenarios\\/[\\w-]{36}$/.test(location.hash)`);
    const scenarioId = (await page.evaluate<string>("location.hash")).split("/").at(-1)!;

    // what the form stored is the scenario as it was typed: JSON values where they parse
    const stored = (await tenant.org.get(`${tenant.P}/test-scenarios/${scenarioId}`)).body.data;
    expect(stored).toMatchObject({
      name: "books a table",
      description: null,
      tags: ["booking", "smoke"],
      kind: "scripted",
      turns: [{ say: "A table for two at seven." }],
      toolPolicy: "mock",
      toolMocks: [{ tool: "book_table", arguments: { people: 2 }, output: { ok: true, table: 12 }, delayMs: 4000 }],
      criteria: [
        { name: "booked", type: "toolCalled", required: true, tool: "book_table", arguments: { people: 2 } },
        { name: "says ciao", type: "said", required: true, pattern: "ciao", by: "agent" },
      ],
    });
    expect(stored.variables).toBeUndefined();

    // edit: the page reads the stored scenario back into the form; saving is a PUT of all of it
    await page.waitForSelector("#scenario-form");
    expect(await page.locator(".criterion").nth(1).locator("input[name=pattern]").inputValue()).toBe("ciao");
    await page.fill("#scenario-description", "The regular's booking.");
    await page.click("#scenario-save");
    await page.waitForSelector("#scenario-result:has-text('Saved.')");
    await shot("tests-scenario");
    const edited = (await tenant.org.get(`${tenant.P}/test-scenarios/${scenarioId}`)).body.data;
    expect(edited).toMatchObject({ ...stored, description: "The regular's booking.", updatedAt: expect.any(String) });

    // run it against the assistant from the list
    await page.click("#nav a[href='#/tests']");
    await page.waitForSelector("#scenarios-list");
    await page.check(`#scenarios-list input[value="${scenarioId}"]`);
    await page.selectOption("#run-target", `assistantId:${assistantId}`);
    await shot("tests");
    await page.click("#run-start");
    await page.waitForFunction(`/^#\\/tests\\/runs\\/[\\w-]{36}$/.test(location.hash)`);
    const runId = (await page.evaluate<string>("location.hash")).split("/").at(-1)!;
    // live: the result is pending while the call runs (the mock holds it 4 s), then final
    await page.waitForSelector("#run-counts:has-text('1 pending')");
    expect(await page.locator("#run-results .result").count()).toBe(0);
    await shot("tests-run-live");
    await page.waitForSelector("#run-status:has-text('completed')", { timeout: 60_000 });
    await page.waitForSelector("#run-results .result");
    await shot("tests-run");

    const run = (await tenant.org.get(`${tenant.P}/test-runs/${runId}`)).body.data;
    expect(run).toMatchObject({ status: "completed", verdict: "failed", counts: { total: 1, failed: 1, pending: 0 } });
    expect(await page.textContent("#run-verdict")).toBe("failed");
    expect(await page.textContent("#run-counts")).toBe("0 passed · 1 failed · 0 error · 0 pending (of 1)");
    const [result] = (await tenant.org.get(`${tenant.P}/test-runs/${runId}/results`)).body.data;
    expect(result.criteria.map((c: { verdict: string }) => c.verdict)).toEqual(["pass", "fail"]);
    const shown = page.locator(`#run-results .result[data-result-id="${result.id}"]`);
    expect(await shown.locator(".result-status").textContent()).toBe("failed");
    for (const c of result.criteria) {
      const row = shown.locator(`tr[data-criterion="${c.name}"]`);
      expect(await row.locator(".verdict").textContent()).toBe(c.verdict);
      expect(await row.textContent()).toContain(c.reason);
    }
    // the transcript: the caller's turn, the mocked tool's answer, the agent quoting it
    await shown.locator(".transcript .user:has-text('A table for two at seven.')").waitFor();
    await shown.locator(`.transcript .tool:has-text('← book_table: {"ok":true,"table":12}')`).waitFor();

    // the call's own page
    await shown.locator(`a.call-link[href="#/calls/${result.agentTaskId}"]`).click();
    await page.waitForSelector("#call-messages .user:has-text('A table for two at seven.')");
    expect(await page.textContent("#call-facts")).toContain("completed");
    await shot("tests-call");

    // delete, with its second click; the run keeps its own copy of the scenario
    await page.goto(`${world.api.url}/console#/tests/scenarios/${scenarioId}`);
    await page.click("#scenario-delete");
    expect((await tenant.org.get(`${tenant.P}/test-scenarios/${scenarioId}`)).status).toBe(200);
    await page.click("#scenario-delete");
    await page.waitForFunction(`location.hash === "#/tests"`);
    await page.waitForSelector("#scenarios-list");
    expect(await page.locator(`#scenarios-list input[value="${scenarioId}"]`).count()).toBe(0);
    expect((await tenant.org.get(`${tenant.P}/test-scenarios/${scenarioId}`)).status).toBe(404);
    expect((await tenant.org.get(`${tenant.P}/test-runs/${runId}/results`)).body.data[0].scenarioName).toBe(
      "books a table",
    );
  }, 180_000);

  test("a simulated scenario with every criterion type reads into the form and saves back unchanged", async () => {
    const { tenant } = world;
    const body = {
      name: "a regular who wants a table",
      description: "Every criterion type once.",
      tags: ["all"],
      kind: "simulated",
      persona: "Maria, a regular, brief and friendly.",
      goal: "A table for two tonight at seven.",
      facts: { name: "Maria Rossi", phone: "+15551230000" },
      maxTurns: 6,
      variables: { customer: "Maria" },
      maxDurationSeconds: 120,
      toolPolicy: "live",
      toolMocks: [{ tool: "book_table", output: "booked" }],
      criteria: [
        { name: "polite", type: "judge", question: "Was the agent polite?" },
        {
          name: "booked once",
          type: "toolCalled",
          tool: "book_table",
          arguments: { people: 2 },
          minTimes: 1,
          maxTimes: 1,
        },
        { name: "no transfer", type: "toolNotCalled", tool: "transfer_call" },
        { name: "confirms", type: "said", pattern: "confirm", by: "agent" },
        { name: "no swearing", type: "notSaid", pattern: "damn", by: "caller" },
        { name: "ends well", type: "endedReason", in: ["hangup", "assistant-ended"] },
        { name: "two people", type: "analysis", path: "/booking", equals: { people: 2, ok: true } },
        { name: "fast", type: "latency", p95MaxMs: 900, required: false },
        { name: "all mocked", type: "noUnmockedTools" },
      ],
    };
    const created = await tenant.org.post(`${tenant.P}/test-scenarios`, body);
    expect(created.status).toBe(201);
    const before = created.body.data;

    await page.goto(`${world.api.url}/console#/tests/scenarios/${before.id}`);
    await page.reload();
    await page.waitForSelector("#scenario-form");
    // the simulated caller's fields show, the scripted turns do not
    expect(await page.isVisible("#scenario-persona")).toBe(true);
    expect(await page.isVisible(".turns")).toBe(false);
    expect(await page.locator(".criterion").count()).toBe(body.criteria.length);
    await shot("tests-scenario-simulated");
    await page.click("#scenario-save");
    await page.waitForSelector("#scenario-result:has-text('Saved.')");
    const after = (await tenant.org.get(`${tenant.P}/test-scenarios/${before.id}`)).body.data;
    expect({ ...after, updatedAt: null }).toEqual({ ...before, updatedAt: null });

    // a criterion's fields follow its type: switching one to endedReason offers the reasons as checkboxes
    const last = page.locator(".criterion").last();
    await last.locator(".criterion-type").selectOption("endedReason");
    await last.locator("input[name=in][value=max-duration]").check();
    await page.click("#scenario-save");
    await page.waitForSelector("#scenario-result:has-text('Saved.')");
    const switched = (await tenant.org.get(`${tenant.P}/test-scenarios/${before.id}`)).body.data;
    expect(switched.criteria.at(-1)).toEqual({
      name: "all mocked",
      type: "endedReason",
      required: true,
      in: ["max-duration"],
    });
  }, 60_000);

  test("Cancel on a running run's page: the run ends canceled, without a verdict", async () => {
    const { tenant } = world;
    // the model holds its reply far longer than the test waits: only the cancel ends the call
    world.chat.firstTokenDelayMs = 60_000;
    const scenario = await tenant.org.post(`${tenant.P}/test-scenarios`, {
      name: "held",
      kind: "scripted",
      turns: [{ say: "A table for two." }],
      criteria: [{ name: "replies", type: "said", pattern: ".", by: "agent" }],
    });
    await page.goto(`${world.api.url}/console#/tests`);
    await page.reload();
    await page.check(`#scenarios-list input[value="${scenario.body.data.id}"]`);
    await page.selectOption("#run-target", `assistantId:${assistantId}`);
    await page.click("#run-start");
    await page.waitForSelector("#run-status:has-text('running')");
    const runId = (await page.evaluate<string>("location.hash")).split("/").at(-1)!;
    const callOf = async () => (await tenant.org.get(`${tenant.P}/agent-tasks?testRunId=${runId}`)).body.data[0];
    // cancel hangs up the calls that are up: wait until this one is
    for (let i = 0; (await callOf())?.status !== "active"; i++) {
      if (i > 80) throw new Error("the run's call did not start");
      await Bun.sleep(250);
    }
    await page.click("#run-cancel");
    await page.waitForSelector("#run-status:has-text('canceled')");
    expect(await page.textContent("#run-verdict")).toBe("not yet");
    expect(await page.isVisible("#run-cancel")).toBe(false);
    await shot("tests-run-canceled");
    expect((await tenant.org.get(`${tenant.P}/test-runs/${runId}`)).body.data).toMatchObject({
      status: "canceled",
      verdict: null,
    });
    // the held call is hung up, not left to its mock
    for (let i = 0; ; i++) {
      const task = await callOf();
      if (task.status === "completed" || task.status === "failed") break;
      if (i > 40) throw new Error(`the canceled run's call is still ${task.status}`);
      await Bun.sleep(250);
    }
  }, 60_000);
});
