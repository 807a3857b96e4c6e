// The call_concluded history built from voice events: no sockets, explicit timestamps.
import { expect, test } from "bun:test";
import { base64ToPcm } from "../../src/audio/pcm";
import { CallMessages } from "../../src/calls/call-messages";
import { at } from "../hooks/fixtures";

const tone = (n: number, value = 1000) => new Int16Array(n).fill(value);

test("utterances are dated when they were said, and transcribed ones are text", () => {
  const log = new CallMessages(8000);
  log.agentAudio(tone(160), 1000);
  log.transcript({ role: "ASSISTANT", text: "Hello", final: false }, 1010);
  log.transcript({ role: "ASSISTANT", text: "Hello there.", final: true }, 1020);
  log.agentDone();
  log.userSpeechStarted(2000);
  log.callerAudio(tone(160));
  log.transcript({ role: "USER", text: "Hi.", final: false }, 2500);
  log.transcript({ role: "USER", text: "Hi.", final: true }, 2600);
  log.toolCall({ callId: "c1", name: "lookup", arguments: { id: 1 } }, 2700);
  log.toolResult("c1", "lookup", "found", 2800, 12);
  expect(log.finish(900)).toEqual([
    { type: "text", role: "ASSISTANT", timestamp: 1000, text: "Hello there." },
    { type: "text", role: "USER", timestamp: 2000, text: "Hi." },
    { type: "tool_call", role: "TOOL_CALL", timestamp: 2700, callId: "c1", toolName: "lookup", parameters: { id: 1 } },
    {
      type: "tool_result",
      role: "TOOL_CALL_RESULT",
      timestamp: 2800,
      callId: "c1",
      toolName: "lookup",
      text: "found",
      durationMs: 12,
    },
  ]);
});

test("an interrupted agent keeps what it said so far; audio nobody transcribed is kept as audio", () => {
  const log = new CallMessages(400);
  log.agentAudio(tone(160, 7), 1000);
  log.agentDone(); // cut off before any transcript
  log.agentAudio(tone(160), 1500);
  log.transcript({ role: "ASSISTANT", text: "Let me", final: false }, 1500);
  log.agentDone();
  log.userSpeechStarted(2000);
  for (let i = 0; i < 5; i++) log.callerAudio(tone(160, 3)); // 800 samples, capped at 400 (whole frames)
  const messages = log.finish(500);
  expect(messages.map(({ type, role, timestamp }) => [type, role, timestamp])).toEqual([
    ["audio", "ASSISTANT", 1000],
    ["text", "ASSISTANT", 1500],
    ["audio", "USER", 2000],
  ]);
  expect(Array.from(base64ToPcm((messages[0] as { audio: string }).audio))).toEqual(Array.from(tone(160, 7)));
  expect(base64ToPcm((messages[2] as { audio: string }).audio)).toHaveLength(480);
});

test("a blank or failed user transcription closes its own turn: later turns keep their own times", () => {
  const log = new CallMessages(8000);
  log.userSpeechStarted(1000);
  log.callerAudio(tone(160, 5));
  log.transcript({ role: "USER", text: "", final: true }, 1500); // blank (or failed) transcription
  log.userSpeechStarted(2000);
  log.callerAudio(tone(160));
  log.transcript({ role: "USER", text: "Two seats.", final: true }, 2600);
  const messages = log.finish(0);
  expect(messages.map(({ type, role, timestamp }) => [type, role, timestamp])).toEqual([
    ["audio", "USER", 1000],
    ["text", "USER", 2000],
  ]);
  expect(Array.from(base64ToPcm((at(messages) as { audio: string }).audio))).toEqual(Array.from(tone(160, 5)));
});

test("nothing is dated before the call started", () => {
  const log = new CallMessages(8000);
  log.agentAudio(tone(160), 100);
  log.transcript({ role: "ASSISTANT", text: "Greeting.", final: true }, 110);
  expect(at(log.finish(400)).timestamp).toBe(400);
});

test("the summary's transcript reads the history in time order", () => {
  expect(
    CallMessages.transcriptOf([
      { type: "text", role: "USER", timestamp: 2, text: "Book it." },
      { type: "text", role: "ASSISTANT", timestamp: 1, text: "Hello." },
      { type: "tool_call", role: "TOOL_CALL", timestamp: 3, callId: "c", toolName: "book", parameters: { n: 2 } },
      { type: "tool_result", role: "TOOL_CALL_RESULT", timestamp: 4, callId: "c", toolName: "book", text: "booked" },
      { type: "audio", role: "USER", timestamp: 5, audio: "AAA=" },
    ]),
  ).toEqual([
    { role: "ASSISTANT", text: "Hello." },
    { role: "USER", text: "Book it." },
    { role: "TOOL_CALL", text: 'book({"n":2})' },
    { role: "TOOL_CALL_RESULT", text: "booked" },
  ]);
});

test("a tool call that comes in the millisecond the agent's reply starts playing follows the reply", () => {
  const log = new CallMessages(8000);
  log.agentAudio(tone(160), 3000); // "Let me check." starts playing at 3000
  log.toolCall({ callId: "c1", name: "lookup", arguments: {} }, 3000); // the same response's call, same ms
  log.transcript({ role: "ASSISTANT", text: "Let me check.", final: true }, 3400); // added when it ends
  log.toolResult("c1", "lookup", "found", 3500, 12);
  expect(log.finish(900).map((m) => m.type)).toEqual(["text", "tool_call", "tool_result"]);
});
