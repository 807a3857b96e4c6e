// The console's dialer in Chromium: from an assistant's page, a call to a number the trunk (Kamailio)
// does not know is placed through the API and the bridge, and the page follows it to "ended:
// unreachable (SIP 404)"; a malformed number shows the API's 400 naming `to`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../helpers/chromium";
import { eventually, startSipWorld, type SipWorld } from "../sip/helpers/sip-world";

let world: SipWorld;
let browser: BrowserContext;
let page: Page;
let profile: string;
let assistantId: string;

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {});
  const trunk = await world.startTrunk({ dialer: "dialpass" }, {}, "127.0.0.1", "kamailio-outbound.cfg");
  const credentialId = await world.createCredential("dialer", "dialpass", 2, trunk);
  const numberId = await world.createNumber(credentialId, "+15550509999");
  assistantId = (await world.createAssistant({ numberId })).id;
  await world.startBridge("dialer");
  await eventually(
    async () => (await world.credential(credentialId)).registration?.state === "registered",
    "registration",
  );
  profile = mkdtempSync(join(tmpdir(), "vas-dialer-chromium-"));
  browser = await launchChromium(join(profile, "user-data"));
  page = browser.pages()[0] ?? (await browser.newPage());
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await world?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test("place a call from an assistant's page and see it end, with why", async () => {
  const { tenant } = world;
  await page.goto(`${world.api.url}/console`);
  await page.fill("#token", tenant.orgToken);
  await page.click("#sign-in button[type=submit]");
  await page.click(`#assistants-list a[href="#/assistants/${assistantId}"]`);
  await page.waitForSelector("#dial-to");

  // bad input: the API's 400 names the field
  await page.fill("#dial-to", "5550001111");
  await page.click("#dial-start");
  await page.waitForSelector("#dial-status.error");
  expect(await page.textContent("#dial-status")).toContain("to:");

  await page.fill("#dial-to", "+15550599999");
  await page.fill("#dial-variables", '{"first_name": "Ada"}');
  await page.click("#dial-start");
  await page.waitForSelector("#dial-status:has-text('ended:')", { timeout: 30_000 });
  expect(await page.textContent("#dial-status")).toBe("ended: unreachable (SIP 404)");
  const tasks = await world.tasks((t) => t.transport?.calledNumber === "+15550599999");
  expect(tasks).toHaveLength(1);
  expect(tasks[0]).toMatchObject({
    direction: "outbound",
    endedReason: "unreachable",
    variables: { first_name: "Ada" },
  });
}, 90_000);
