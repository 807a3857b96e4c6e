// The pipeline's pure parts: tool-call fragments joined by index, sentences cut from streamed text,
// and which words of an utterance were heard by a given moment.
import { expect, test } from "bun:test";
import { heardText, PlaybackClock } from "../../src/voice/pipeline/playback-clock";
import { SentenceSplitter } from "../../src/voice/pipeline/sentences";
import { ToolCallAssembler } from "../../src/voice/pipeline/tool-call-assembler";

test("tool-call fragments of parallel calls are joined by index, whatever their interleaving", () => {
  const calls = new ToolCallAssembler();
  calls.add([{ index: 0, id: "call_a", function: { name: "get_weather", arguments: "" } }]);
  calls.add([{ index: 1, id: "call_b", function: { name: "lookup_order", arguments: '{"ord' } }]);
  calls.add([{ index: 0, function: { arguments: '{"city":' } }]);
  calls.add([
    { index: 1, function: { arguments: 'erId":"42"}' } },
    { index: 0, function: { arguments: '"Rome"}' } },
  ]);
  expect(calls.done()).toEqual([
    { id: "call_a", name: "get_weather", arguments: '{"city":"Rome"}' },
    { id: "call_b", name: "lookup_order", arguments: '{"orderId":"42"}' },
  ]);
});

test("sentences go out as soon as they end; very short ones wait for more; the rest at the end", () => {
  const split = new SentenceSplitter();
  expect(split.push("Sure. I can")).toEqual([]);
  expect(split.push(" help with that. Your order")).toEqual(["Sure. I can help with that."]);
  expect(split.push(" ships tomorrow! And")).toEqual(["Your order ships tomorrow!"]);
  expect(split.flush()).toBe("And");
  expect(split.flush()).toBeNull();
});

test("heard text: by alignment where given (whole words only), else by the share of audio played", () => {
  let now = 1000;
  const clock = new PlaybackClock(() => now);
  clock.start();
  const text = "Hello there friend";
  const chars = [...text];
  // 100 ms per character, in two chunks
  const first = clock.add(900, {
    chars: chars.slice(0, 9),
    charStartTimesMs: chars.slice(0, 9).map((_, i) => i * 100),
  });
  const second = clock.add(900, { chars: chars.slice(9), charStartTimesMs: chars.slice(9).map((_, i) => i * 100) });
  expect(first.startsAt).toBe(1000);
  expect(second.startsAt).toBe(1900);
  expect(heardText(text, [first, second], 1000 + 850)).toBe("Hello"); // "Hello the": "the" is cut off
  expect(heardText(text, [first, second], 1000 + 1250)).toBe("Hello there");
  expect(heardText(text, [first, second], 5000)).toBe(text);
  const unaligned = [
    { ...first, alignment: null },
    { ...second, alignment: null },
  ];
  expect(heardText(text, unaligned, 1000 + 1800 * 0.7)).toBe("Hello there");
  // audio emitted before the call starts plays from the start
  now = 0;
  const later = new PlaybackClock(() => now);
  const waiting = later.add(500, null);
  expect(waiting.startsAt).toBe(Number.POSITIVE_INFINITY);
  now = 200;
  later.start();
  expect(waiting.startsAt).toBe(200);
});
