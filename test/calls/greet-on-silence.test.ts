import { expect, test } from "bun:test";
import { GreetOnSilence } from "../../src/calls/greet-on-silence";

const frame = (amplitude: number) => Int16Array.from({ length: 160 }, (_, i) => (i % 2 ? amplitude : -amplitude));

test("silence: the greeting plays once the silence ran out (the voice was ready before)", async () => {
  const opening = new GreetOnSilence(8000, 50);
  let greeted = 0;
  opening.ready(() => greeted++);
  for (let i = 0; i < 5; i++) opening.feed(frame(20)); // line noise
  expect(greeted).toBe(0);
  await Bun.sleep(120);
  expect(greeted).toBe(1);
  expect(opening.calleeFirst).toBe(false);
});

test("the voice ready after the silence ran out: it greets at once", async () => {
  const opening = new GreetOnSilence(8000, 10);
  await Bun.sleep(40);
  let greeted = 0;
  opening.ready(() => greeted++);
  expect(greeted).toBe(1);
});

test("the callee speaks first: the timer does not greet (the voice answers their words with the greeting)", async () => {
  const opening = new GreetOnSilence(8000, 50);
  let greeted = 0;
  opening.ready(() => greeted++);
  for (let i = 0; i < 6; i++) opening.feed(frame(4000)); // 120 ms of "hello?"
  expect(opening.calleeFirst).toBe(true);
  await Bun.sleep(120);
  expect(greeted).toBe(0);
});

test("words said before the voice is ready (nobody heard them) do not stop the silence's greeting", async () => {
  const opening = new GreetOnSilence(8000, 50);
  for (let i = 0; i < 6; i++) opening.feed(frame(4000)); // "hello?" while the providers connect
  let greeted = 0;
  opening.ready(() => greeted++);
  expect(opening.calleeFirst).toBe(false);
  await Bun.sleep(120);
  expect(greeted).toBe(1);
});

test("a click is not speech", async () => {
  const opening = new GreetOnSilence(8000, 50);
  let greeted = 0;
  opening.ready(() => greeted++);
  opening.feed(frame(8000));
  opening.feed(frame(0));
  opening.feed(frame(8000));
  await Bun.sleep(120);
  expect(opening.calleeFirst).toBe(false);
  expect(greeted).toBe(1);
});
