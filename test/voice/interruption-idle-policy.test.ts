// The turn-taking policy's interruption and idle parts on their own (src/voice/turn-taking/): what the
// engines and the call session feed them, and what they decide. No sockets, no providers.
import { expect, test } from "bun:test";
import { IdleWatch } from "../../src/voice/turn-taking/idle";
import { CutIn, cutsOffAtOnce, isInterruption, withoutWords } from "../../src/voice/turn-taking/interruption";
import { turnTakingOf, turnTakingWithoutExtension } from "../../src/voice/turn-taking/turn-taking";

const interruption = (parameters: Record<string, unknown> = {}) =>
  turnTakingOf([{ type: "turn_taking", parameters: { interruption: parameters } }], null).interruption;

function cutIn(parameters: Record<string, unknown> = {}) {
  const events: string[] = [];
  const cut = new CutIn(interruption(parameters), {
    pause: () => events.push("pause"),
    resume: () => events.push("resume"),
    interrupt: () => events.push("interrupt"),
  });
  return { cut, events };
}

async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`no ${what}`);
    await Bun.sleep(5);
  }
}

test("acknowledgements said alone are no interruption (lowercased, punctuation dropped); the start of one waits", () => {
  const settings = interruption();
  expect(isInterruption("Uh-huh.", settings, true)).toBe(false);
  expect(isInterruption("OK!", settings, true)).toBe(false);
  expect(isInterruption("Got it.", settings, true)).toBe(false);
  expect(isInterruption("Got", settings, false)).toBe(false); // "got it" may follow
  expect(isInterruption("Got", settings, true)).toBe(true);
  expect(isInterruption("Yes, but wait", settings, false)).toBe(true);
  expect(isInterruption("", settings, true)).toBe(false);
  expect(isInterruption("Uh-huh.", interruption({ acknowledgements: [] }), true)).toBe(true);
});

test("minDurationMs counts the speech, not the silence before the VAD's stop: a short sound leaves the agent alone", () => {
  const { cut, events } = cutIn({ minDurationMs: 500 });
  cut.speechStarted(64);
  cut.window(200, true); // 264 ms of speech
  cut.window(300, false); // then the stop's silence: 564 ms in all
  expect(events).toEqual([]);
  expect(cut.finish("")).toBe(false);
  expect(events).toEqual([]);
});

test("minWords: the agent pauses at minDurationMs and is cut off once the interim transcript holds that many words", () => {
  const { cut, events } = cutIn({ minWords: 3 });
  cut.speechStarted(64);
  cut.window(100, true);
  expect(events).toEqual([]);
  cut.window(200, true); // 364 ms: past the default 300
  expect(events).toEqual(["pause"]);
  cut.heard("Wait");
  cut.heard("Wait a");
  expect(events).toEqual(["pause"]);
  cut.heard("Wait a second");
  expect(events).toEqual(["pause", "interrupt"]);
  expect(cut.finish("Wait a second.")).toBe(true);
  expect(events).toEqual(["pause", "interrupt"]);
});

test("enough words heard before minDurationMs cut the agent off as soon as the speech lasts it, without a pause first", () => {
  const { cut, events } = cutIn({ minDurationMs: 500, minWords: 2 });
  cut.speechStarted(64);
  cut.heard("Stop right");
  expect(events).toEqual([]);
  cut.window(300, true);
  expect(events).toEqual([]);
  cut.window(200, true); // 564 ms
  expect(events).toEqual(["interrupt"]);
});

test("words too few at the turn's end, or an acknowledgement: the agent resumes, unanswered", () => {
  for (const said of ["No.", "Okay."]) {
    const { cut, events } = cutIn({ minWords: 2 });
    cut.speechStarted(400);
    expect(cut.finish(said)).toBe(false);
    expect(events).toEqual(["pause", "resume"]);
  }
});

test("no word within falseInterruptionMs: the agent resumes; words that come later still cut it off", async () => {
  const { cut, events } = cutIn({ falseInterruptionMs: 50 });
  cut.speechStarted(400);
  expect(events).toEqual(["pause"]);
  await until(() => events.length === 2, "resume");
  expect(events).toEqual(["pause", "resume"]);
  cut.heard("Hold on");
  expect(events).toEqual(["pause", "resume", "interrupt"]);
  expect(cut.finish("Hold on.")).toBe(true);
});

test("falseInterruptionMs 0: sound without words that paused the agent cuts it off; an acknowledgement still resumes it", () => {
  const silent = cutIn({ falseInterruptionMs: 0 });
  silent.cut.speechStarted(400);
  expect(silent.cut.finish("")).toBe(true);
  expect(silent.events).toEqual(["pause", "interrupt"]);
  const ack = cutIn({ falseInterruptionMs: 0 });
  ack.cut.speechStarted(400);
  expect(ack.cut.finish("Right.")).toBe(false);
  expect(ack.events).toEqual(["pause", "resume"]);
});

test("without the extension any speech cuts the agent off at once; an engine that hears no words decides by duration alone", () => {
  expect(cutsOffAtOnce(turnTakingWithoutExtension.interruption)).toBe(true);
  expect(cutsOffAtOnce(interruption())).toBe(false);
  expect(cutsOffAtOnce(interruption({ minDurationMs: 0 }))).toBe(false); // acknowledgements need the words
  expect(cutsOffAtOnce(withoutWords(interruption({ minDurationMs: 0 })))).toBe(true);
  expect(cutsOffAtOnce(withoutWords(interruption({ enabled: false, minDurationMs: 0 })))).toBe(false);
  const events: string[] = [];
  const cut = new CutIn(withoutWords(interruption({ minDurationMs: 800 })), {
    pause: () => events.push("pause"),
    resume: () => events.push("resume"),
    interrupt: () => events.push("interrupt"),
  });
  cut.lasted(800);
  expect(events).toEqual(["interrupt"]);
});

function idleWatch(settings: { timeoutMs: number; messages: string[]; maxPrompts: number; hangupAfterMs: number }) {
  const said: string[] = [];
  const watch: IdleWatch = new IdleWatch(settings, {
    // the agent says the prompt, and it plays out
    prompt: (template) => {
      said.push(template);
      queueMicrotask(() => {
        watch.agentSpeaks();
        watch.agentDone();
      });
    },
    hangup: () => said.push("hang up"),
  });
  return { watch, said };
}

test("idle: prompts in order, the last repeated, maxPrompts in a row, then the hang-up", async () => {
  const { watch, said } = idleWatch({ timeoutMs: 20, messages: ["first", "again"], maxPrompts: 3, hangupAfterMs: 20 });
  watch.agentSpeaks();
  watch.agentDone();
  await until(() => said.includes("hang up"), "hang-up");
  expect(said).toEqual(["first", "again", "again", "hang up"]);
});

test("idle: the caller speaking starts the count and the messages again; maxPrompts 0 hangs up after the agent's speech", async () => {
  const { watch, said } = idleWatch({ timeoutMs: 20, messages: ["first", "again"], maxPrompts: 2, hangupAfterMs: 20 });
  watch.agentDone();
  await until(() => said.length === 1, "a prompt");
  watch.callerSpeaks();
  watch.agentSpeaks(); // the answer
  watch.agentDone();
  await until(() => said.includes("hang up"), "hang-up");
  expect(said).toEqual(["first", "first", "again", "hang up"]);

  const none = idleWatch({ timeoutMs: 20, messages: ["first"], maxPrompts: 0, hangupAfterMs: 20 });
  none.watch.agentDone();
  await until(() => none.said.length > 0, "hang-up");
  expect(none.said).toEqual(["hang up"]);
});

test("idle: no time counts while a tool runs, the caller speaks or an answer is coming; an unanswered turn counts again", async () => {
  const { watch, said } = idleWatch({ timeoutMs: 20, messages: ["still there?"], maxPrompts: 1, hangupAfterMs: 5_000 });
  watch.agentSpeaks();
  watch.toolStarted();
  watch.agentDone(); // (a Realtime response that only called the tool)
  await Bun.sleep(100);
  watch.toolFinished(); // the agent answers with the result: the silence counts from its end
  await Bun.sleep(100);
  watch.callerSpeaks();
  await Bun.sleep(100);
  expect(said).toEqual([]);
  watch.callerUnanswered(false); // nothing understood, nothing answered
  await until(() => said.length === 1, "a prompt");
  expect(said).toEqual(["still there?"]);
  watch.close();
});
