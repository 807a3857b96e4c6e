// The console's knowledge pages in Chromium (playwright-core, test/helpers/chromium.ts): a knowledge
// base is created, a Markdown file and pasted HTML are uploaded and chunked, the search box shows what
// the tool would hand the LLM, the base is attached to an assistant through its form (a knowledge_base extension)
// (then switched to url mode with a write-only token, then removed), a document is deleted, and
// deleting a base in use shows the 409 as a clear message. Screenshots go to test-artifacts/console/.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { BrowserContext, Page } from "playwright-core";
import { createDb } from "../../src/db/client";
import { extensions } from "../../src/db/schema";
import { createTenant, startTestApi, type Tenant, type TestApi } from "../helpers/api";
import { launchChromium } from "../helpers/chromium";

const artifacts = join(import.meta.dir, "../../test-artifacts/console");
const database = createDb(process.env.DATABASE_URL!, { max: 1 });
let api: TestApi;
let tenant: Tenant;
let browser: BrowserContext;
let page: Page;
let profile: string;
let assistantId: string;

const markdown = `# Parking and charging

Visitors park for free in the garage behind the building, on levels 2 and 3.

## Electric cars

Four chargers for electric vehicles are on level 2. Charging is free for the first two hours.

## Bicycles

Bike racks stand beside the main entrance; the doors open at seven.
`;

const html = `<html><head><title>ignored</title><style>.x{color:red}</style><script>var refundScript = 1</script></head>
<body><h1>Refund policy</h1><p>We refund any purchase within 30 days when you bring the receipt.</p>
<h2>Damaged goods</h2><p>A broken or damaged item is replaced or refunded at once, even without the receipt.</p>
<script>alert("never indexed")</script></body></html>`;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  api = await startTestApi();
  tenant = await createTenant(api.url, "kconsole");
  // another extension beside the knowledge tool: the form must leave it as it is
  const assistant = await tenant.org.post(`${tenant.P}/assistants`, {
    name: "Front desk",
    extensions: [{ type: "call_analysis", parameters: { schema: '{"type":"object"}' } }],
  });
  expect(assistant.status).toBe(201);
  assistantId = assistant.body.data.id;
  profile = mkdtempSync(join(tmpdir(), "vas-knowledge-chromium-"));
  browser = await launchChromium(join(profile, "user-data"));
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on("dialog", (dialog) => void dialog.accept()); // the delete buttons ask first
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await database.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
const documentRow = (title: string) =>
  page.locator("#documents tr", { has: page.locator(`.doc-title:text-is("${title}")`) });
const storedAssistant = async () => (await tenant.org.get(`${tenant.P}/assistants/${assistantId}`)).body.data;
/** An input of the assistant's form: extensions[i]'s `name` (its full path is data-field). */
const tool = (name: string, i = 0) => page.locator(`[data-field="extensions[${i}].${name}"]`);
const knowledgeExtensions = async () =>
  ((await storedAssistant()).extensions as any[]).filter((e) => e.type === "knowledge_base");

/** The search box's answer, and the same question asked of the API. */
async function search(kbId: string, q: string, maxResults: string) {
  await page.fill("#search-q", q);
  await page.fill("#search-max", maxResults);
  const before = await page.$("#search-json");
  await page.click("#kb-search button[type=submit]");
  await page.waitForFunction((old) => !old?.isConnected, before); // the previous answer replaced
  await page.waitForSelector("#search-json", { state: "attached" }); // inside a closed <details>
  const shown = JSON.parse((await page.textContent("#search-json"))!);
  const params = new URLSearchParams({ q, maxResults });
  const fromApi = await tenant.org.get(`${tenant.P}/knowledge-bases/${kbId}/search?${params}`);
  return { shown: shown.results as any[], fromApi: fromApi.body.data as any[] };
}

describe("the console's knowledge pages", () => {
  test("create a base, upload, search, attach it to an assistant, delete a document, 409 while in use", async () => {
    await page.goto(`${api.url}/console`);
    await page.fill("#token", tenant.orgToken);
    await page.click("#sign-in button[type=submit]");
    await page.waitForSelector("#assistants-list");
    await page.click('#nav a[href="#/knowledge"]');
    await page.waitForSelector("#kb-create");

    // create: the page moves to the new base
    await page.fill("#kb-name", "Help center");
    await page.fill("#kb-description", "Visitors' questions");
    await page.click("#kb-create button[type=submit]");
    await page.waitForSelector("#doc-upload");
    const kbId = /#\/knowledge\/([\w-]+)/.exec(page.url())![1]!;
    expect((await tenant.org.get(`${tenant.P}/knowledge-bases/${kbId}`)).body.data).toMatchObject({
      name: "Help center",
      description: "Visitors' questions",
      documents: 0,
    });

    // a Markdown file: its title and source default to the file's name; three sections, three chunks
    await page.setInputFiles("#doc-file", {
      name: "parking.md",
      mimeType: "text/markdown",
      buffer: Buffer.from(markdown),
    });
    await page.click("#doc-upload-button");
    await page.waitForSelector("#upload-result:has-text('Stored “parking”: 3 chunks')");
    expect(await documentRow("parking").locator(".doc-chunks").textContent()).toBe("3");

    // pasted HTML: scripts and styles dropped, two headings, two chunks
    await page.fill("#doc-title", "Refund policy");
    await page.fill("#doc-source", "https://example.com/refunds");
    await page.selectOption("#doc-format", "text/html");
    await page.fill("#doc-text", html);
    await page.click("#doc-upload-button");
    await page.waitForSelector("#upload-result:has-text('Stored “Refund policy”: 2 chunks')");
    expect(await documentRow("Refund policy").locator(".doc-chunks").textContent()).toBe("2");
    expect(await page.textContent("#kb-chunk-count")).toBe("5");
    expect(await page.textContent("#kb-document-count")).toBe("2");
    const docs = (await tenant.org.get(`${tenant.P}/knowledge-bases/${kbId}/documents?sort=title,asc`)).body.data;
    expect(docs.map((d: any) => [d.title, d.source, d.chunks])).toEqual([
      ["Refund policy", "https://example.com/refunds", 2],
      ["parking", "parking.md", 3],
    ]);
    await shot("knowledge-base");

    // search: the page shows exactly what the API (and so the tool) answers, the right document first
    const refund = await search(kbId, "my kettle arrived broken, can I get my money back?", "3");
    expect(refund.shown).toEqual(refund.fromApi);
    expect(refund.shown[0]).toMatchObject({ title: "Refund policy", source: "https://example.com/refunds" });
    expect(refund.shown[0].content).toContain("A broken or damaged item is replaced");
    expect(JSON.stringify(refund.shown)).not.toContain("refundScript");
    expect(await page.locator("#search-table .result-title").first().textContent()).toBe("Refund policy");
    const charge = await search(kbId, "where do I charge my electric car", "1");
    expect(charge.shown).toEqual(charge.fromApi);
    expect(charge.shown).toHaveLength(1);
    expect(charge.shown[0]).toMatchObject({ title: "parking", source: "parking.md" });
    expect(charge.shown[0].content).toContain("Four chargers");
    expect(await page.locator("#search-table tr").count()).toBe(2); // the header and one result
    await page.click("#search-results summary");
    await shot("knowledge-search");

    // attach the base to the assistant through the form; the other extension stays as it was
    await page.goto(`${api.url}/console#/assistants/${assistantId}`);
    await page.waitForSelector('[data-add="extensions"]');
    expect(await tool("type").inputValue()).toBe("call_analysis");
    await page.click('[data-add="extensions"]');
    await tool("type", 1).selectOption("knowledge_base");
    await tool("parameters.knowledgeBaseId", 1).selectOption(kbId);
    await tool("parameters.name", 1).fill("search_help");
    await tool("parameters.description", 1).fill("Parking, refunds and opening hours");
    await tool("parameters.maxResults", 1).fill("5");
    await page.click("#save");
    await page.waitForSelector("#save-result:has-text('Saved.')");
    await shot("assistant-knowledge-tool");
    const attached = await storedAssistant();
    expect(attached.extensions).toHaveLength(2);
    expect(attached.extensions.map((e: any) => e.type).sort()).toEqual(["call_analysis", "knowledge_base"]);
    expect((await knowledgeExtensions())[0].parameters).toEqual({
      knowledgeBaseId: kbId,
      name: "search_help",
      description: "Parking, refunds and opening hours",
      maxResults: 5,
    });

    // delete a document: its chunks go, and the search no longer finds it
    await page.goto(`${api.url}/console#/knowledge/${kbId}`);
    await documentRow("parking").locator(".delete-document").click();
    await page.waitForSelector("#document-result:has-text('Deleted “parking”.')");
    expect(await documentRow("parking").count()).toBe(0);
    expect(await page.textContent("#kb-chunk-count")).toBe("2");
    expect((await tenant.org.get(`${tenant.P}/knowledge-bases/${kbId}/documents`)).body.totalElements).toBe(1);
    const gone = await search(kbId, "where do I charge my electric car", "3");
    expect(gone.shown.map((r) => r.title)).not.toContain("parking");

    // the base is in use: its delete is a 409, said as what to do; it stays
    await page.goto(`${api.url}/console#/knowledge`);
    const baseRow = page.locator(`#knowledge-bases tr[data-id="${kbId}"]`);
    expect(await baseRow.locator(".kb-chunks").textContent()).toBe("2");
    await baseRow.locator(".delete-kb").click();
    await page.waitForSelector("#kb-result.error:has-text('“Help center” is in use')");
    expect(await page.textContent("#kb-result")).toContain("in use by “Front desk”: a knowledge tool searches it");
    expect(await page.textContent("#kb-result")).toContain("Remove that knowledge tool");
    expect(await baseRow.count()).toBe(1);
    expect((await tenant.org.get(`${tenant.P}/knowledge-bases/${kbId}`)).status).toBe(200);
    await shot("knowledge-in-use");
  }, 120_000);

  test("edit the knowledge tool to url mode with a write-only token, then remove it; the base can go", async () => {
    const kbId = (await tenant.org.get(`${tenant.P}/knowledge-bases`)).body.data.find(
      (kb: any) => kb.name === "Help center",
    ).id;
    const [stored] = await knowledgeExtensions();
    expect(stored.parameters.knowledgeBaseId).toBe(kbId); // left by the first test
    await page.goto(`${api.url}/console#/assistants/${assistantId}`);
    await page.reload();
    const kt = (name: string) => tool(`parameters.${name}`, 1);
    await kt("knowledgeBaseId").waitFor();
    expect(await kt("knowledgeBaseId").inputValue()).toBe(kbId);
    expect(await kt("maxResults").inputValue()).toBe("5");
    expect(await kt("url").inputValue()).toBe("");

    // url mode: no base, a url and its token
    await kt("knowledgeBaseId").selectOption("");
    await kt("url").fill("http://127.0.0.1:9/search");
    await kt("authToken").fill("kb-s3cret-token");
    await page.click("#save");
    await page.waitForSelector("#save-result:has-text('Saved.')");
    const read = await tenant.org.get(`${tenant.P}/assistants/${assistantId}`);
    expect(JSON.stringify(read.body)).not.toContain("kb-s3cret-token");
    const [urlTool] = await knowledgeExtensions();
    expect(urlTool.id).toBe(stored.id); // edited in place, not replaced
    expect(urlTool.parameters).toEqual({
      url: "http://127.0.0.1:9/search",
      name: "search_help",
      description: "Parking, refunds and opening hours",
      maxResults: 5,
    });
    const sealed = async () =>
      (await database.db.select().from(extensions).where(eq(extensions.id, stored.id)))[0]!.secretEncrypted;
    const secret = await sealed();
    expect(secret).toBeString();

    // never shown back; saved again with the field empty, the token is kept
    await page.reload();
    await kt("authToken").waitFor();
    expect(await kt("authToken").inputValue()).toBe("");
    expect(await page.content()).not.toContain("kb-s3cret-token");
    await kt("maxResults").fill("4");
    await page.click("#save");
    await page.waitForSelector("#save-result:has-text('Saved.')");
    expect((await knowledgeExtensions())[0].parameters.maxResults).toBe(4);
    expect(await sealed()).toBe(secret);

    // a maxResults out of 1..20 is refused by the browser before anything is sent
    await kt("maxResults").fill("21");
    await page.click("#save");
    expect(
      await kt("maxResults").evaluate(
        (input) => (input as unknown as { validity: { rangeOverflow: boolean } }).validity.rangeOverflow,
      ),
    ).toBe(true);
    expect(await page.evaluate<boolean>(`document.querySelector("#save").form.checkValidity()`)).toBe(false);

    // remove it: only the other extension is left, and the base is no longer in use
    await page.reload();
    await page.locator('[data-field="extensions[1]"] + button.remove').click();
    await page.click("#save");
    await page.waitForSelector("#save-result:has-text('Saved.')");
    expect((await storedAssistant()).extensions.map((e: any) => e.type)).toEqual(["call_analysis"]);
    await page.goto(`${api.url}/console#/knowledge`);
    const baseRow = page.locator(`#knowledge-bases tr[data-id="${kbId}"]`);
    await baseRow.locator(".delete-kb").click();
    await page.waitForSelector("#kb-result:has-text('Deleted “Help center”.')");
    expect(await baseRow.count()).toBe(0);
    expect((await tenant.org.get(`${tenant.P}/knowledge-bases/${kbId}`)).status).toBe(404);
  }, 90_000);

  test("a JSON file carries its own title and source; documents are paged, newest first", async () => {
    const kb = (await tenant.org.post(`${tenant.P}/knowledge-bases`, { name: "Many" })).body.data.id;
    for (let i = 1; i <= 20; i++) {
      const res = await tenant.org.send(
        "POST",
        `${tenant.P}/knowledge-bases/${kb}/documents?title=doc-${i}`,
        `Note number ${i}.`,
        { "content-type": "text/plain" },
      );
      expect(res.status).toBe(201);
    }
    await page.goto(`${api.url}/console#/knowledge/${kb}`);
    await page.waitForSelector("#doc-upload");
    await page.fill("#doc-title", "not this one"); // a JSON document's own title wins
    await page.setInputFiles("#doc-file", {
      name: "faq.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify({ title: "FAQ", content: "We open at nine.", source: "faq-export" })),
    });
    await page.click("#doc-upload-button");
    await page.waitForSelector("#upload-result:has-text('Stored “FAQ”: 1 chunk from')");
    const [newest] = (await tenant.org.get(`${tenant.P}/knowledge-bases/${kb}/documents?sort=createdAt,desc`)).body
      .data;
    expect(newest).toMatchObject({ title: "FAQ", source: "faq-export", chunks: 1 });
    await page.waitForSelector("#documents-next");
    expect(await page.locator("#documents .doc-title").count()).toBe(20);
    expect(await page.locator("#documents .doc-title").first().textContent()).toBe("FAQ");
    expect(await page.textContent("#documents-pager")).toContain("page 1 of 2 (21 documents)");
    expect(await page.locator("#documents-prev").count()).toBe(0);
    await page.click("#documents-next");
    await page.waitForSelector("#documents-prev");
    // the oldest is alone on the second page
    expect(await page.locator("#documents .doc-title").allTextContents()).toEqual(["doc-1"]);
    expect(await page.locator("#documents-next").count()).toBe(0);
    await shot("knowledge-documents-page-2");
  }, 60_000);
});
