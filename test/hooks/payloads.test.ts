import { describe, expect, test } from "bun:test";
import { serializePayload, stripNulls, type CallConcludedPayload } from "../../src/events/payloads";
import { secretKeyBytes, signWebhook } from "../../src/events/sign";

describe("serializePayload", () => {
  const concluded: CallConcludedPayload = {
    type: "call_concluded",
    callId: "7f9c0a52-2d0f-4c3c-9d41-3b1c8f0e6a10",
    startedAt: 1_700_000_000_000,
    endedAt: null,
    shortSummary: null,
    summary: "s",
    callRecording: null,
    transport: { type: "sip", calledNumber: "+49301", callingNumber: null as unknown as string },
    direction: "inbound",
    endedReason: "hangup",
    messages: [
      { type: "tool_result", role: "TOOL_CALL_RESULT", timestamp: 30, callId: "t1", toolName: "book", text: "ok" },
      { type: "text", role: "USER", timestamp: 10, text: "first" },
      {
        type: "tool_call",
        role: "TOOL_CALL",
        timestamp: 20,
        callId: "t1",
        toolName: "book",
        parameters: { when: null, seats: 2 },
      },
      { type: "audio", role: "ASSISTANT", timestamp: 10, audio: "AAAA" },
    ],
  };

  test("omits null fields at every depth, except inside a tool call's parameters", () => {
    const body = JSON.parse(serializePayload(concluded));
    expect(Object.keys(body)).not.toContain("endedAt");
    expect(Object.keys(body)).not.toContain("shortSummary");
    expect(Object.keys(body)).not.toContain("callRecording");
    expect(body.transport).toEqual({ type: "sip", calledNumber: "+49301" });
    // the LLM's arguments are data, not fields of the payload: a null there is a value it chose
    expect(body.messages[2].parameters).toEqual({ when: null, seats: 2 });
  });

  test("orders messages chronologically, keeping the given order for equal times", () => {
    const body = JSON.parse(serializePayload(concluded));
    expect(body.messages.map((m: { type: string }) => m.type)).toEqual(["text", "audio", "tool_call", "tool_result"]);
  });

  test("latency carries voice-to-voice only, and is left out for a call with no turn measured", () => {
    const voiceToVoiceMs = { p50: 820, p95: 1310, max: 1310 };
    expect(JSON.parse(serializePayload({ ...concluded, latency: { voiceToVoiceMs } })).latency).toEqual({
      voiceToVoiceMs,
    });
    expect(Object.keys(JSON.parse(serializePayload({ ...concluded, latency: null })))).not.toContain("latency");
  });

  test("a null transport disappears, array elements keep their positions", () => {
    expect(
      JSON.parse(
        serializePayload({ type: "call_started", callId: "c", startedAt: null, transport: null, direction: "inbound" }),
      ),
    ).toEqual({
      type: "call_started",
      callId: "c",
      direction: "inbound",
    });
    expect(stripNulls({ a: [1, null, { b: null }] })).toEqual({ a: [1, null, {}] });
  });
});

describe("signWebhook", () => {
  // the published Standard Webhooks example (standard-webhooks spec, svix libraries' tests)
  test("matches the Standard Webhooks test vector", () => {
    const headers = signWebhook({
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestampSec: 1614265330,
      body: '{"test": 2432232314}',
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    });
    expect(headers["webhook-signature"]).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    expect(headers["webhook-timestamp"]).toBe("1614265330");
  });

  test("whsec_ secrets are base64 key bytes, other secrets their UTF-8 bytes", () => {
    expect(secretKeyBytes("whsec_AAEC")).toEqual(Buffer.from([0, 1, 2]));
    expect(secretKeyBytes("pässword")).toEqual(Buffer.from("pässword", "utf8"));
  });
});
