// What a handoff's destination is told of the conversation (calls/handoff.ts contextOf): every mode,
// tool calls kept with their results, a call still waiting and untranscribed speech left out.
import { describe, expect, test } from "bun:test";
import { contextOf } from "../../src/calls/handoff";
import type { CallMessage } from "../../src/events/payloads";

const messages: CallMessage[] = [
  { type: "text", role: "ASSISTANT", timestamp: 1, text: "Hello, Acme here." },
  { type: "audio", role: "USER", timestamp: 2, audio: "AAAA" },
  { type: "text", role: "USER", timestamp: 3, text: "Where is my order 42?" },
  {
    type: "tool_call",
    role: "TOOL_CALL",
    timestamp: 4,
    callId: "c1",
    toolName: "lookup_order",
    parameters: { orderId: "42" },
  },
  // the tool filler is said between a call and its result
  { type: "text", role: "ASSISTANT", timestamp: 5, text: "One moment." },
  {
    type: "tool_result",
    role: "TOOL_CALL_RESULT",
    timestamp: 6,
    callId: "c1",
    toolName: "lookup_order",
    text: "ships",
  },
  {
    type: "tool_call",
    role: "TOOL_CALL",
    timestamp: 7,
    callId: "c2",
    toolName: "handoff",
    parameters: { destination: "billing" },
  },
];

const lookup = [
  { type: "tool_call", callId: "c1", name: "lookup_order", arguments: { orderId: "42" } },
  { type: "tool_result", callId: "c1", output: "ships" },
];

describe("contextOf", () => {
  test("all: the words and each answered tool call with its result right after it; the waiting handoff and audio left out", () => {
    expect(contextOf(messages, "all", 20)).toEqual([
      { type: "text", role: "ASSISTANT", text: "Hello, Acme here." },
      { type: "text", role: "USER", text: "Where is my order 42?" },
      ...lookup,
      { type: "text", role: "ASSISTANT", text: "One moment." },
    ] as never);
  });

  test("lastMessages: the last maxMessages items; a result whose call fell outside goes too", () => {
    expect(contextOf(messages, "lastMessages", 3)).toEqual([
      ...lookup,
      { type: "text", role: "ASSISTANT", text: "One moment." },
    ] as never);
    expect(contextOf(messages, "lastMessages", 2)).toEqual([{ type: "text", role: "ASSISTANT", text: "One moment." }]);
    expect(contextOf(messages, "lastMessages", 100)).toEqual(contextOf(messages, "all", 20));
  });

  test("none: nothing", () => {
    expect(contextOf(messages, "none", 20)).toEqual([]);
  });
});
