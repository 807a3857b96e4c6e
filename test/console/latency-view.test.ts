// The console's latency per turn: the call page draws a bar per turn, its stages in proportion, and
// the call list shows each call's voice-to-voice p50, both as the agent task has them. A real call
// through the bridge (the fake Realtime provider answers after a set delay) gives the task its turns.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { CallLatency } from "../../src/models/call-latency";
import { signInConsole, type TestBrowser } from "../helpers/chromium";
import { startConsoleWorld, stopConsoleWorld } from "./console-world";
import { speech } from "../helpers/speech";
import { completedTask, callPastGreeting, createAssistant, type World } from "../bridge/fixtures";

let world: World;
let browser: TestBrowser;

beforeAll(async () => {
  ({ world, browser } = await startConsoleWorld("latency"));
}, 90_000);
afterAll(() => stopConsoleWorld({ world, browser }));

/** A call of two turns, ended by the agent; its task once concluded. */
async function twoTurnCall() {
  const assistant = await createAssistant(world, {
    greeting: "Hello, Acme desk.",
    fake: {
      responseDelayMs: 200,
      turns: [
        { userSays: "When do you open?", reply: { text: "At nine." } },
        { userSays: "Bye for now.", reply: { text: "Goodbye!", toolCalls: [{ name: "end_call", arguments: {} }] } },
      ],
    },
  });
  const { caller, callId } = await callPastGreeting(world, assistant.id, "Hello, Acme desk.");
  await caller.say(await speech("When do you open?", 16000));
  await caller.waitForAgentSaid("At nine.");
  await caller.say(await speech("Bye for now.", 16000));
  await caller.closed;
  const task = await completedTask(world, callId);
  return task;
}

test("the call page draws each turn's stages as a bar; the call list shows the call's p50", async () => {
  const task = await twoTurnCall();
  const { turns, voiceToVoiceMs } = task.latency as CallLatency;
  expect(turns).toHaveLength(2);
  expect(voiceToVoiceMs).not.toBeNull();
  const summary = voiceToVoiceMs!;

  const { page } = browser;
  await signInConsole(page, world.api.url, world.tenant.orgToken);
  await page.goto(`${world.api.url}/console#/calls`);
  const row = page.locator("#calls-list tr", { has: page.locator(`a[href="#/calls/${task.id}"]`) });
  expect(await row.locator(".latency-p50").textContent()).toBe(`${summary.p50} ms`);

  await page.goto(`${world.api.url}/console#/calls/${task.id}`);
  await page.waitForSelector("#call-latency");
  const bars = await page.$$eval("#call-latency .latency-turn", (rows) =>
    rows.map((row) => ({
      label: row.querySelector(".latency-label")?.textContent,
      bar: row.querySelector(".latency-bar")!.getBoundingClientRect().width,
      segments: [...row.querySelectorAll(".latency-bar > span")].map((s) => ({
        stage: s.className,
        ms: Number(s.getAttribute("data-ms")),
        width: s.getBoundingClientRect().width,
      })),
    })),
  );
  expect(bars.map((b) => b.label)).toEqual(turns.map((t) => `Turn ${t.index}: ${t.voiceToVoiceMs} ms`));
  for (const [i, { segments }] of bars.entries()) {
    const turn = turns[i]!;
    // Realtime has no TTS stage; what the named stages leave of voice-to-voice is drawn as the rest
    expect(segments.map((s) => s.stage).filter((s) => s !== "stage-other")).toEqual(["stage-endpointing", "stage-llm"]);
    expect(segments.slice(0, 2).map((s): number | null => s.ms)).toEqual([turn.endpointingMs, turn.llmFirstTokenMs]);
    const named = turn.endpointingMs! + turn.llmFirstTokenMs!;
    expect(segments.reduce((sum, s) => sum + s.ms, 0)).toBe(Math.max(named, turn.voiceToVoiceMs!));
  }
  // one scale for every bar: the longest turn fills its bar, and widths follow the milliseconds
  const longest = Math.max(...bars.map((b) => b.segments.reduce((sum, s) => sum + s.ms, 0)));
  const scale = longest / bars[0]!.bar;
  for (const { segments } of bars)
    for (const s of segments) expect(Math.abs(s.width * scale - s.ms)).toBeLessThanOrEqual(scale * 2);
  expect(await page.textContent("#call-latency")).toContain(
    `Voice-to-voice p50 ${summary.p50} ms, p95 ${summary.p95} ms, max ${summary.max} ms.`,
  );
}, 90_000);
