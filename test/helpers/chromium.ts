// Debian's chromium for console tests, driven by playwright-core: headless, a fake microphone playing
// `mic` (a WAV) when given; a launch that hangs (seen once on a loaded machine) is tried again.
import { chromium, type BrowserContext } from "playwright-core";

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
