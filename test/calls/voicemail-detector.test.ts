// The voicemail detector on generated audio (espeak-ng speech, a sine beep, a noisy PCMU line): a beep
// decides machine, a long greeting decides machine, "Hello?" then silence decides human, and with a
// machine the message waits for the beep's end or the greeting's end.
import { expect, test } from "bun:test";
import { strongestTone } from "../../src/audio/tone-frame";
import { VoicemailDetector, type VoicemailEvent } from "../../src/calls/voicemail-detector";
import { beep, concat, overTheLine } from "../helpers/answering-audio";
import { silence, speech } from "../helpers/speech";

const rate = 8000;

function run(samples: Int16Array, chunk = 160): VoicemailEvent[] {
  const detector = new VoicemailDetector(rate);
  const events: VoicemailEvent[] = [];
  for (let i = 0; i < samples.length; i += chunk) events.push(...detector.feed(samples.subarray(i, i + chunk)));
  return events;
}

test("a pure tone holds nearly all of a frame's energy at its frequency; speech does not", async () => {
  const tone = strongestTone(beep(1400, 100, rate).subarray(320, 480), rate);
  expect(tone.hz).toBe(1400);
  expect(tone.purity).toBeGreaterThan(0.9);
  const said = await speech("Please leave a message after the tone.", rate);
  let loudFrames = 0;
  let toneLike = 0;
  for (let i = 0; i + 160 <= said.length; i += 160) {
    const frame = said.subarray(i, i + 160);
    if (Math.max(...frame) < 1500) continue;
    loudFrames++;
    if (strongestTone(frame, rate).purity >= 0.6) toneLike++;
  }
  expect(loudFrames).toBeGreaterThan(20);
  expect(toneLike / loudFrames).toBeLessThan(0.15);
});

test("a beep after a short greeting: machine by the beep, the message right after it ends", async () => {
  const head = concat(silence(300, rate), await speech("Sam Lee.", rate));
  const beepEndsAt = ((head.length + 4000) / rate) * 1000; // 500 ms of beep
  const events = run(overTheLine(concat(head, beep(1000, 500, rate), silence(2000, rate))), 80);
  expect(events.map((e) => e.type)).toEqual(["machine", "message-ready"]);
  expect(events[0]).toMatchObject({ reason: "beep" });
  const ready = events[1]!.atMs;
  expect(ready).toBeGreaterThanOrEqual(beepEndsAt);
  expect(ready).toBeLessThan(beepEndsAt + 100);
});

test("a greeting that talks on: machine before it ends; no beep: the message after 1 s of silence", async () => {
  const greeting = concat(
    silence(400, rate),
    await speech("Hi, you have reached John. I can't take your call right now, please leave a message.", rate),
  );
  const greetingMs = (greeting.length / rate) * 1000;
  const events = run(overTheLine(concat(greeting, silence(3000, rate))));
  expect(events.map((e) => e.type)).toEqual(["machine", "message-ready"]);
  expect(events[0]).toMatchObject({ reason: "long-greeting" });
  expect(events[0]!.atMs).toBeLessThan(greetingMs - 1000);
  expect(events[1]!.atMs).toBeGreaterThan(greetingMs);
  expect(events[1]!.atMs).toBeLessThan(greetingMs + 1200);
});

test('"Hello?" then silence: a person, decided within a second of the answer ending', async () => {
  const hello = concat(silence(500, rate), await speech("Hello?", rate));
  const events = run(overTheLine(concat(hello, silence(4000, rate))));
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: "human", reason: "short-answer" });
  expect(events[0]!.atMs).toBeLessThan((hello.length / rate) * 1000 + 1000);
});

test("nobody says anything: a person after 5 s (the call goes on)", () => {
  const events = run(overTheLine(silence(7000, rate)));
  expect(events).toEqual([{ type: "human", reason: "no-speech", atMs: 5000 }]);
});
