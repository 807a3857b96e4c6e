// The console's campaigns pages in Chromium, against the SIP test world (Kamailio as the trunk with
// its 407 on every INVITE, a SIPp UAS answering, a bridge holding the credential, a real Temporal
// worker): a campaign created through the form is dialled and its page follows the counts to
// completed; one uploaded as a CSV file with calling hours that are closed now is paused, resumed and
// canceled with the page's buttons, each change seen through the API; bad contacts show the 400.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../helpers/chromium";
import { freePort } from "../helpers/temporal";
import { startRtpPeer, type RtpPeer } from "../sip/helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "../sip/helpers/sip-world";
import { startSippUas, uasEnding } from "../sip/helpers/sipp-uas";

let world: SipWorld;
let browser: BrowserContext;
let page: Page;
let profile: string;
let peer: RtpPeer;
let assistantId: string;
let credentialId: string;
let numberId: string;
let answerPort: number;
const answer = "+15550610010";

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {});
  answerPort = await freePort();
  const trunk = await world.startTrunk(
    { console: "consolepass" },
    { [answer.slice(1)]: `127.0.0.1:${answerPort}` },
    "127.0.0.1",
    "kamailio-outbound.cfg",
  );
  credentialId = await world.createCredential("console", "consolepass", 3, trunk);
  numberId = await world.createNumber(credentialId, "+15550610999");
  assistantId = (await world.createAssistant({ numberId, greeting: "Hi {{first_name}}." })).id;
  peer = await startRtpPeer("PCMU");
  await world.startBridge("console");
  await eventually(
    async () => (await world.credential(credentialId)).registration?.state === "registered",
    "registration",
  );
  profile = mkdtempSync(join(tmpdir(), "vas-campaigns-chromium-"));
  browser = await launchChromium(join(profile, "user-data"));
  page = browser.pages()[0] ?? (await browser.newPage());
  await page.goto(`${world.api.url}/console`);
  await page.fill("#token", world.tenant.orgToken);
  await page.click("#sign-in button[type=submit]");
  await page.waitForSelector("#assistants-list");
}, 180_000);
afterAll(async () => {
  await browser?.close();
  peer?.stop();
  await world?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const P = () => world.tenant.P;
const org = () => world.tenant.org;
const apiCampaign = async (id: string) => (await org().get(`${P()}/campaigns/${id}`)).body.data;
const campaignIdOfPage = () => /#\/campaigns\/([\w-]+)/.exec(page.url())![1]!;
const count = (name: string) => page.textContent(`#campaign-counts .count-${name}`);

/** The form filled with the tenant's assistant, credential and caller number, and `name`. */
async function openForm(name: string) {
  await page.click("#nav a[href='#/campaigns']");
  await page.click("#new-campaign");
  await page.waitForSelector("#campaign-form");
  await page.fill("#campaign-name", name);
  await page.selectOption("#campaign-owner", `assistantId:${assistantId}`);
  await page.selectOption("#campaign-credential", credentialId);
  await page.selectOption("#campaign-number", numberId);
}

test("a campaign created with the form is dialled; its page and the list follow the counts to completed", async () => {
  const uas = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: peer.port, RING_MS: 100, ENDING: uasEnding.byeAfter(1000) },
    answerPort,
    3,
  );
  await openForm("reminders");
  await page.fill("#campaign-contacts", `to,first_name\n${answer},Ada\n${answer},Bo\n${answer},Cy\n`);
  await page.fill("#campaign-max-concurrent", "2");
  await page.fill("#campaign-max-attempts", "1");
  await page.click("#campaign-create");
  await page.waitForSelector("#campaign-counts");
  const id = campaignIdOfPage();
  expect(await count("total")).toBe("3");

  // the page polls: the counts reach completed without a reload
  await page.waitForSelector("#campaign-status:has-text('completed')", { timeout: 60_000 });
  await page.waitForSelector("#campaign-counts .count-completed:text-is('3')", { timeout: 10_000 });
  const rows = await page.$$eval("#campaign-contacts tr", (trs) =>
    trs.slice(1).map((tr) => ["status", "attempts", "ended-reason"].map((c) => tr.querySelector(`.${c}`)?.textContent)),
  );
  expect(rows).toEqual(Array(3).fill(["completed", "1", "hangup"]));
  expect(await page.isDisabled("#campaign-pause")).toBe(true);

  const api = await apiCampaign(id);
  expect(api).toMatchObject({
    name: "reminders",
    assistantId,
    phoneNumberId: numberId,
    status: "completed",
    maxConcurrentCalls: 2,
    schedule: null,
    retry: { maxAttempts: 1 },
    counts: { total: 3, completed: 3, pending: 0 },
  });
  const tasks = await world.tasks((t) => t.campaignId === id);
  expect(new Set(tasks.map((t) => t.variables.first_name))).toEqual(new Set(["Ada", "Bo", "Cy"]));
  expect((await uas.result).code).toBe(0);

  await page.click("#nav a[href='#/campaigns']");
  await page.waitForSelector(`#campaigns-list tr[data-id='${id}']`);
  expect(await page.textContent(`#campaigns-list tr[data-id='${id}'] .status`)).toBe("completed");
  expect(await page.textContent(`#campaigns-list tr[data-id='${id}'] .count-completed`)).toBe("3");
}, 120_000);

test("a CSV file with closed calling hours: pause, resume and cancel from its page, each seen through the API", async () => {
  await openForm("later");
  await page.setInputFiles("#campaign-file", {
    name: "contacts.csv",
    mimeType: "text/csv",
    buffer: Buffer.from(`to,first_name\n${answer},Di\n${answer},Ed\n`),
  });
  await eventually(async () => (await page.inputValue("#campaign-contacts")).includes("Ed"), "the file read");
  // a window that is not open now, every day, in UTC: the campaign runs but dials nobody
  const minute = new Date().getUTCHours() * 60 + new Date().getUTCMinutes();
  const [start, end] = minute < 600 ? ["14:00", "15:00"] : ["02:00", "03:00"];
  await page.check("#campaign-scheduled");
  await page.fill("#campaign-timezone", "UTC");
  for (const day of ["sat", "sun"]) await page.check(`#campaign-day-${day}`);
  await page.fill("#campaign-start", start);
  await page.fill("#campaign-end", end);
  await page.selectOption("#campaign-voicemail", "leave_message");
  await page.fill("#campaign-voicemail-message", "Call us back, {{first_name}}.");
  await page.uncheck("#campaign-retry-no-answer");
  await page.click("#campaign-create");
  await page.waitForSelector("#campaign-status:has-text('running')");
  const id = campaignIdOfPage();
  expect(await apiCampaign(id)).toMatchObject({
    status: "running",
    schedule: {
      timezone: "UTC",
      windows: [{ days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], start, end }],
    },
    retry: { onReasons: ["busy"] },
    voicemail: { action: "leave_message", message: "Call us back, {{first_name}}." },
    counts: { total: 2, pending: 2 },
  });

  await page.click("#campaign-pause");
  await page.waitForSelector("#campaign-status:has-text('paused')");
  expect((await apiCampaign(id)).status).toBe("paused");
  expect(await page.isDisabled("#campaign-pause")).toBe(true);

  await page.click("#campaign-resume");
  await page.waitForSelector("#campaign-status:has-text('running')");
  expect((await apiCampaign(id)).status).toBe("running");

  await page.click("#campaign-cancel");
  await page.waitForSelector("#campaign-status:has-text('canceled')");
  // the workflow cancels the pending contacts; the page's poll shows them
  await page.waitForSelector("#campaign-counts .count-canceled:text-is('2')", { timeout: 20_000 });
  expect(await apiCampaign(id)).toMatchObject({ status: "canceled", counts: { canceled: 2, pending: 0 } });
  expect(await world.tasks((t) => t.campaignId === id)).toHaveLength(0);
  expect(await page.isDisabled("#campaign-resume")).toBe(true);
}, 90_000);

test("contacts the API refuses show its 400 naming the field, and nothing is created", async () => {
  const before = (await org().get(`${P()}/campaigns?size=100`)).body.data.length;
  await openForm("bad");
  await page.fill("#campaign-contacts", "to\nnot-a-number\n");
  await page.click("#campaign-create");
  await page.waitForSelector("#campaign-error:has-text('contacts[0].to')");
  expect(page.url()).toContain("#/campaigns/new");
  expect((await org().get(`${P()}/campaigns?size=100`)).body.data).toHaveLength(before);
}, 30_000);
