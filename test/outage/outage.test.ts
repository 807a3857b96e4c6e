// Postgres away for longer than the bridges' heartbeat TTL, refused and black-holed, while calls are
// live on two bridges: no process dies, the API says 503 in time, new calls learn "try again later",
// live calls keep their audio, calls ended meanwhile are concluded once after the return, and no
// bridge takes the other's live calls for dead. The deadline is short here to keep the test short.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runOutage, startOutageWorld, type OutageWorld, type Variant } from "./outage-world";

const settings = { databaseTimeoutMs: 2_000, heartbeatMs: 500, heartbeatTtlMs: 2_000 };
let world: OutageWorld;

beforeAll(async () => {
  world = await startOutageWorld(settings);
}, 90_000);
afterAll(async () => {
  await world?.stop();
});

describe.each(["refused", "black-holed"] as Variant[])("Postgres %s for longer than the heartbeat TTL", (variant) => {
  test("the service degrades, keeps its calls and comes back by itself", async () => {
    const report = await runOutage(world, variant, { outageMs: 5_000, ending: 1 });

    expect(world.exited()).toEqual([]);
    // the API answered 503 in the envelope, never hung past the deadline; only within the read model's
    // lease of the cut (its last sync, 100 ms by default) may a read by id still come from memory
    expect(report.apiAnswers.length).toBeGreaterThan(3);
    for (const answer of report.apiAnswers) {
      if (answer.at < 100) expect([200, 503]).toContain(answer.status);
      else expect(answer).toMatchObject({ status: 503, success: false });
      expect(answer.ms).toBeLessThan(settings.databaseTimeoutMs + 1_000);
    }
    expect(report.readyz.status).toBe(503);
    expect(report.readyz.ms).toBeLessThan(1_500);
    // a new call learns "try again later" (1013) instead of waiting on a dead connection
    expect(report.newCall.code).toBe(1013);
    expect(report.newCall.ms).toBeLessThan(3_000);
    // live calls kept their audio (a stall of a second would be a broken call)
    expect(report.longestAudioGapMs).toBeLessThan(1_000);
    // back within 5 s of the return; the calls ended meanwhile concluded exactly once (one event each;
    // its delivery may be sent twice when the outage cut between an attempt and its record)
    expect(report.firstOkAfterReturnMs).toBeLessThan(5_000);
    expect(report.concludedCounts).toEqual([1, 1]);
    // nobody concluded the calls that lived through the outage
    expect(report.liveStatuses).toEqual(["active", "active"]);
  }, 120_000);
});
