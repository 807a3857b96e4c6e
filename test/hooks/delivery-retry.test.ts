// The retry schedule end to end: real worker, real Temporal, real HTTP, the base scaled to milliseconds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { failTimes, startReceiver, type Receiver } from "../helpers/receiver";
import { ensureTemporal, freePort, startWorker, type TestWorker } from "../helpers/temporal";
import { at, attemptsOf, callConcluded, createAssistantWithHooks, emitOne, openDb, waitForStatus } from "./fixtures";

// long enough that scheduling overhead on a busy 2-core machine cannot hide the 1:2:4:8:16 shape: up
// to a few hundred ms per attempt, and ~200 ms more before attempt 2 of an eagerly started workflow
const BASE_MS = 1_000;
const TIMEOUT_MS = 700;
const { db, close } = openDb();
let worker: TestWorker;
const receivers: Receiver[] = [];

beforeAll(async () => {
  const { address } = await ensureTemporal();
  worker = await startWorker({ address, backoffBaseMs: BASE_MS, timeoutMs: TIMEOUT_MS });
  // one delivery first, so the measured gaps do not include the new worker's first workflow and connections
  const warm = await receiver();
  await waitForStatus(db, [await deliverTo(warm.url)], ["SUCCEEDED"], 20_000);
}, 60_000);
afterAll(async () => {
  await worker?.kill();
  await Promise.all(receivers.map((r) => r.close()));
  await close();
});

async function deliverTo(url: string) {
  const a = await createAssistantWithHooks(db, [{ url }]);
  return emitOne(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() });
}

async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

describe("delivery retries", () => {
  test("a receiver failing 5 times gets it on attempt 6, after waits in the ratios 1:2:4:8:16", async () => {
    const r = await receiver(failTimes(5, 503));
    const id = await deliverTo(r.url);
    const row = at(await waitForStatus(db, [id], ["SUCCEEDED"], 60_000));
    expect(row.attemptCount).toBe(6);
    expect(r.requests).toHaveLength(6);

    const gaps = r.requests.slice(1).map((req, i) => req.receivedAt - at(r.requests, i).receivedAt);
    // a wait is never shorter than the schedule; scheduling overhead only adds to it
    for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(BASE_MS * 2 ** i - 5);
    for (let i = 1; i < gaps.length; i++) {
      const ratio = at(gaps, i) / at(gaps, i - 1);
      expect(ratio).toBeGreaterThan(1.4);
      expect(ratio).toBeLessThan(2.6);
    }

    const attempts = await attemptsOf(db, id);
    expect(attempts.map((a) => a.statusCode)).toEqual([503, 503, 503, 503, 503, 200]);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    // each failed attempt says when the next one is due, the successful one does not
    attempts.slice(0, 5).forEach((a, i) => {
      expect(a.nextAttemptAt!.getTime() - a.startedAt.getTime()).toBeGreaterThanOrEqual(BASE_MS * 2 ** i);
    });
    expect(at(attempts, 5).nextAttemptAt).toBeNull();
    expect(row.nextAttemptAt).toBeNull();
  }, 80_000);

  test("a receiver that never answers has each attempt cut at the time-out", async () => {
    const r = await receiver((_req, i) => (i < 2 ? "hang" : { status: 204 }));
    const id = await deliverTo(r.url);
    await waitForStatus(db, [id], ["SUCCEEDED"], 20_000);
    const attempts = await attemptsOf(db, id);
    expect(attempts).toHaveLength(3);
    for (const a of attempts.slice(0, 2)) {
      expect(a.statusCode).toBeNull();
      expect(a.error).toContain(`no response within ${TIMEOUT_MS} ms`);
      expect(a.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
      expect(a.durationMs).toBeLessThan(TIMEOUT_MS + 1_000);
    }
    expect(at(attempts, 2).statusCode).toBe(204);
  }, 30_000);

  test("an error status, a redirect and a refused connection are failed attempts", async () => {
    const target = await receiver();
    const redirecting = await receiver((_req, i) =>
      i === 0 ? { status: 404 } : i === 1 ? { status: 302, headers: { location: target.url } } : { status: 200 },
    );
    const id = await deliverTo(redirecting.url);
    await waitForStatus(db, [id], ["SUCCEEDED"], 20_000);
    const attempts = await attemptsOf(db, id);
    expect(attempts.map((a) => a.statusCode)).toEqual([404, 302, 200]);
    expect(at(attempts, 1).error).toContain("redirect not followed");
    expect(target.requests).toHaveLength(0);

    const closedPort = await freePort();
    const refused = await deliverTo(`http://127.0.0.1:${closedPort}/hook`);
    const deadline = Date.now() + 10_000;
    let seen = await attemptsOf(db, refused);
    while (seen.length < 2 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 50));
      seen = await attemptsOf(db, refused);
    }
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(at(seen).error).toContain("ECONNREFUSED");
    expect(at(seen).statusCode).toBeNull();
    const row = at(await waitForStatus(db, [refused], ["PENDING"], 1_000));
    expect(row.nextAttemptAt).not.toBeNull();
  }, 30_000);

  test("the response body is kept as a short excerpt", async () => {
    const r = await receiver(() => ({ status: 200, body: "x".repeat(100_000) }));
    const id = await deliverTo(r.url);
    await waitForStatus(db, [id], ["SUCCEEDED"], 10_000);
    const attempt = at(await attemptsOf(db, id));
    expect(attempt.responseExcerpt).toBe("x".repeat(1024));
  }, 20_000);
});
