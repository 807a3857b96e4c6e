// Debian's chromium for console tests, driven by playwright-core: headless, a fake microphone playing
// `mic` (a WAV) when given; a launch that hangs (seen once on a loaded machine) is tried again.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export type TestBrowser = { context: BrowserContext; page: Page; close(): Promise<void> };

/** A browser for one test file, in a profile folder of its own that `close` removes again. */
export async function openBrowser(name: string): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), `vas-${name}-chromium-`));
  const context = await launchChromium(join(profile, "user-data"));
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Signs the console in with `token` and waits for its first page (a page opened sooner loses to its redirect). */
export async function signInConsole(page: Page, apiUrl: string, token: string) {
  await page.goto(`${apiUrl}/console`);
  await page.fill("#token", token);
  await page.click("#sign-in button[type=submit]");
  await page.waitForSelector("#assistants-list");
}

export async function launchChromium(userData: string, mic?: string): Promise<BrowserContext> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchOnce(`${userData}-${attempt}`, mic);
    } catch (error) {
      if (attempt === 2) throw error;
      console.log(`[console] chromium launch ${attempt} failed, trying again: ${(error as Error).message}`);
    }
  }
}

function launchOnce(userData: string, mic: string | undefined) {
  return chromium.launchPersistentContext(userData, {
    timeout: 45_000,
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--autoplay-policy=no-user-gesture-required",
      "--use-fake-ui-for-media-stream",
      "--use-fake-device-for-media-stream",
      ...(mic ? [`--use-file-for-fake-audio-capture=${mic}`] : []),
    ],
  });
}
