// What a receiver sees: method, body, headers and signature, checked by an independent verifier.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { hookDeliveries } from "../../src/db/schema";
import { failTimes, startReceiver, type Receiver, type ReceivedRequest } from "../helpers/receiver";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import {
  at,
  callConcluded,
  callStarted,
  createAssistantWithHooks,
  deliveryRow,
  emit,
  openDb,
  waitForStatus,
} from "./fixtures";

const { db, close } = openDb();
let worker: TestWorker;
let receiver: Receiver;

beforeAll(async () => {
  const { address } = await ensureTemporal();
  worker = await startWorker({ address, backoffBaseMs: 50 });
  receiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  await worker?.kill();
  await receiver?.close();
  await close();
});

/**
 * Standard Webhooks verification written from the specification (standardwebhooks.com), on Web Crypto,
 * sharing no code with the service's signer.
 */
async function verifyStandardWebhook(req: ReceivedRequest, secret: string, toleranceSec = 300): Promise<boolean> {
  const id = req.headers["webhook-id"];
  const timestamp = req.headers["webhook-timestamp"];
  const signatures = req.headers["webhook-signature"];
  if (typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string") return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSec) return false;
  const keyBytes = secret.startsWith("whsec_")
    ? Uint8Array.from(atob(secret.slice(6)), (c) => c.charCodeAt(0))
    : new TextEncoder().encode(secret);
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const content = new Uint8Array([...new TextEncoder().encode(`${id}.${timestamp}.`), ...req.body]);
  for (const entry of signatures.split(" ")) {
    const [version, b64] = entry.split(",");
    if (version !== "v1" || !b64) continue;
    const mac = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    if (await crypto.subtle.verify("HMAC", key, mac, content)) return true;
  }
  return false;
}

const requestsTo = (path: string) => receiver.requests.filter((r) => r.path === path);

describe("the delivered request", () => {
  test("every method carries the JSON body, with static headers and our User-Agent", async () => {
    const methods = ["POST", "GET", "PUT", "PATCH", "DELETE"];
    const a = await createAssistantWithHooks(
      db,
      methods.map((method) => ({
        url: `${receiver.url}/m/${method}`,
        method,
        headers: { authorization: "Bearer abc", "x-env": "test" },
      })),
    );
    const event = callConcluded();
    const { deliveryIds } = await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event });
    await waitForStatus(db, deliveryIds, ["SUCCEEDED"], 20_000);

    for (const method of methods) {
      const req = at(requestsTo(`/m/${method}`));
      expect(req.method).toBe(method);
      expect(req.headers["content-type"]).toBe("application/json");
      expect(req.headers["user-agent"]).toBe("voice-assistant-service-hooks/0.1");
      expect(req.headers.authorization).toBe("Bearer abc");
      expect(req.headers["x-env"]).toBe("test");
      expect(req.headers["webhook-signature"]).toBeUndefined();
      const body = JSON.parse(req.body.toString());
      expect(body).toMatchObject({ type: "call_concluded", callId: event.callId, startedAt: event.startedAt });
    }
  }, 30_000);

  test("a call_concluded body has no null fields (tool parameters aside) and its messages in chronological order", async () => {
    const a = await createAssistantWithHooks(db, [{ url: `${receiver.url}/nulls` }]);
    const event = callConcluded({
      endedAt: null,
      summary: null,
      transport: { type: "sip", calledNumber: "+4930", callingNumber: null as unknown as string },
      messages: [
        {
          type: "tool_result",
          role: "TOOL_CALL_RESULT",
          timestamp: 400,
          callId: "tc1",
          toolName: "lookup",
          text: "found",
        },
        {
          type: "tool_call",
          role: "TOOL_CALL",
          timestamp: 300,
          callId: "tc1",
          toolName: "lookup",
          parameters: { q: "x", page: null },
        },
        { type: "audio", role: "USER", timestamp: 200, audio: "UklGRg==" },
        { type: "text", role: "ASSISTANT", timestamp: 100, text: "Hi" },
      ],
    });
    const { deliveryIds } = await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event });
    await waitForStatus(db, deliveryIds, ["SUCCEEDED"], 20_000);
    const body = JSON.parse(at(requestsTo("/nulls")).body.toString());
    // a tool call's parameters are the LLM's arguments, sent as they are; every other null is omitted
    const withoutParameters = body.messages.map(({ parameters: _, ...m }: Record<string, unknown>) => m);
    expect(JSON.stringify({ ...body, messages: withoutParameters })).not.toContain("null");
    expect(Object.keys(body).sort()).toEqual([
      "callId",
      "direction",
      "endedReason",
      "messages",
      "shortSummary",
      "startedAt",
      "transport",
      "type",
    ]);
    expect(body.transport).toEqual({ type: "sip", calledNumber: "+4930" });
    expect(body.messages.map((m: { type: string }) => m.type)).toEqual(["text", "audio", "tool_call", "tool_result"]);
    expect(body.messages[2]).toEqual({
      type: "tool_call",
      role: "TOOL_CALL",
      timestamp: 300,
      callId: "tc1",
      toolName: "lookup",
      parameters: { q: "x", page: null },
    });
  }, 30_000);

  test("call_started carries type, callId, startedAt and transport", async () => {
    const a = await createAssistantWithHooks(db, [{ type: "call_started", url: `${receiver.url}/started` }]);
    const event = callStarted();
    await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event });
    const req = at(await waitForPath("/started", 1));
    expect(JSON.parse(req.body.toString())).toEqual(event);
  }, 30_000);

  test("signed deliveries verify with whsec_ and plain secrets; webhook-id is stable across retries", async () => {
    const signed = await startReceiver(failTimes(1));
    try {
      const secrets = [
        `whsec_${Buffer.from("a 32 byte key for the hmac test!").toString("base64")}`,
        "plain shared secret",
      ];
      const a = await createAssistantWithHooks(
        db,
        secrets.map((secret, i) => ({ url: `${signed.url}/s/${i}`, secret })),
      );
      const { deliveryIds } = await emit(db, {
        organizationId: a.organizationId,
        assistantId: a.assistantId,
        event: callConcluded(),
      });
      await signed.waitForRequests(3, 20_000);
      await waitForStatus(db, deliveryIds, ["SUCCEEDED"], 20_000);

      for (const [i, secret] of secrets.entries()) {
        const reqs = signed.requests.filter((r) => r.path === `/s/${i}`);
        expect(reqs.length).toBeGreaterThanOrEqual(1);
        for (const req of reqs) {
          expect(await verifyStandardWebhook(req, secret)).toBe(true);
          const wrong = secret.startsWith("whsec_")
            ? `whsec_${btoa("another key, also 32 bytes long!")}`
            : `${secret}x`;
          expect(await verifyStandardWebhook(req, wrong)).toBe(false);
          const tampered = {
            ...req,
            body: Buffer.from(req.body.toString().replace("call_concluded", "call_concludee")),
          };
          expect(await verifyStandardWebhook(tampered, secret)).toBe(false);
        }
        expect(new Set(reqs.map((r) => r.headers["webhook-id"])).size).toBe(1);
        expect(deliveryIds).toContain(at(reqs).headers["webhook-id"] as string);
      }
      // the first request failed (failTimes(1)), so one delivery was retried under the same id
      expect(signed.requests).toHaveLength(3);
    } finally {
      await signed.close();
    }
  }, 30_000);

  test("the same event emitted twice is delivered once, and a repeated start of the run sends nothing", async () => {
    const a = await createAssistantWithHooks(db, [{ url: `${receiver.url}/once` }]);
    const event = callConcluded();
    const input = { organizationId: a.organizationId, assistantId: a.assistantId, event };
    const [first, second] = await Promise.all([emit(db, input), emit(db, input)]);
    expect(second.deliveryIds).toEqual(first.deliveryIds);
    const id = at(first.deliveryIds);
    await waitForStatus(db, [id], ["SUCCEEDED"], 20_000);

    // hand the finished run to the dispatcher again, attempt 1 recorded: Temporal refuses the same workflow id
    await db
      .update(hookDeliveries)
      .set({ status: "PENDING", dispatchedAt: null, claimedAt: null })
      .where(eq(hookDeliveries.id, id));
    const deadline = Date.now() + 10_000;
    let row = await deliveryRow(db, id);
    while (row.dispatchedAt === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      row = await deliveryRow(db, id);
    }
    expect(row.dispatchedAt).not.toBeNull();
    await new Promise((r) => setTimeout(r, 500));
    expect(requestsTo("/once")).toHaveLength(1);
  }, 30_000);
});

async function waitForPath(path: string, n: number) {
  const deadline = Date.now() + 20_000;
  while (requestsTo(path).length < n) {
    if (Date.now() > deadline) throw new Error(`no request to ${path}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return requestsTo(path);
}
