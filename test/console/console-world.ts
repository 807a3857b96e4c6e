// What the call-page suites share: a bridge world (fixtures.ts) and a Chromium to read its console with.
import { startWorld, type World } from "../bridge/fixtures";
import { openBrowser, type TestBrowser } from "../helpers/chromium";

export async function startConsoleWorld(name: string) {
  return { world: await startWorld(), browser: await openBrowser(name) };
}

export async function stopConsoleWorld({ world, browser }: { world?: World; browser?: TestBrowser }) {
  await browser?.close();
  await world?.stop();
}
