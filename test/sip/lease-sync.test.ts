// Leases and take-over on the real database: two bridges' LeaseSyncs, one credential. The first
// bridge claims it; once its lease expires the second takes it over and closes the first one's open
// call as lost; the first learns at its next beat that it lost the lease.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { LeaseKeeper } from "../../src/sip/leases";
import { LeaseSync } from "../../src/sip/takeover";
import { startCredentialFixtures } from "./helpers/credentials";

let fixtures: Awaited<ReturnType<typeof startCredentialFixtures>>;

beforeAll(async () => {
  fixtures = await startCredentialFixtures("lease-sync");
});
afterAll(async () => {
  await fixtures?.stop();
});

test("claim, expiry, take-over with the dead owner's call closed, and the loss reported to the late owner", async () => {
  const credentialId = await fixtures.createCredential();
  const numberId = await fixtures.createNumber(credentialId, "+15550310001");
  const assistantId = await fixtures.createAssistant(numberId);
  const ids = { a: `lease-a-${process.pid}`, b: `lease-b-${process.pid}` };
  const a = new LeaseSync(fixtures.db, new LeaseKeeper(fixtures.db, ids.a, 300));
  const b = new LeaseSync(fixtures.db, new LeaseKeeper(fixtures.db, ids.b, 300));

  const first = await a.beat();
  expect(first.owned.has(credentialId)).toBe(true);
  expect(first.lost).toEqual([]);
  // a live lease is not taken
  expect((await b.beat()).owned.has(credentialId)).toBe(false);
  const callId = await fixtures.openTask(credentialId, numberId, assistantId, ids.a);

  await Bun.sleep(400); // a stops renewing
  const second = await b.beat();
  expect(second.owned.has(credentialId)).toBe(true);
  expect(await fixtures.task(callId)).toMatchObject({ status: "failed", error: "bridge lost" });
  expect((await b.beat()).owned.has(credentialId)).toBe(true);

  const late = await a.beat();
  expect(late.owned.has(credentialId)).toBe(false);
  expect(late.lost).toContain(credentialId);
  expect((await a.beat()).lost).toEqual([]); // reported once

  await b.releaseAll();
  expect((await a.beat()).owned.has(credentialId)).toBe(true); // released leases are free at once
  await a.releaseAll();
});

test("a worker's fair share counts free and expired leases together", async () => {
  const dead = new LeaseKeeper(fixtures.db, `lease-dead-${process.pid}`, 100);
  for (let i = 0; i < 4; i++) await fixtures.createCredential();
  await dead.heartbeat(); // every credential now has a lease that is about to expire
  for (let i = 0; i < 4; i++) await fixtures.createCredential(); // and these have none
  await Bun.sleep(200);
  const [row] = await fixtures.db.execute<{ n: number }>("select count(*)::int as n from sip_credentials");
  const worker = new LeaseKeeper(fixtures.db, `lease-worker-${process.pid}`, 5_000, { bridges: 2 });
  const { owned } = await worker.heartbeat();
  expect(owned.length).toBe(Math.ceil((row?.n ?? 0) / 2));
});

test("an expired lease is taken over only by a bridge that watched the database for the lease's length", async () => {
  const credentialId = await fixtures.createCredential();
  const ids = { owner: `lease-owner-${process.pid}`, back: `lease-back-${process.pid}` };
  const owner = new LeaseKeeper(fixtures.db, ids.owner, 300);
  expect((await owner.heartbeat()).owned).toContain(credentialId);
  await Bun.sleep(400); // an outage longer than the lease: it expired, its owner is alive
  let watchedMs = 100; // the other bridge is back from the same outage since 100 ms
  const back = new LeaseKeeper(fixtures.db, ids.back, 300, null, () => watchedMs);
  expect((await back.heartbeat()).owned).not.toContain(credentialId);
  // the owner renews first: its lease is its own again
  expect((await owner.heartbeat()).owned).toContain(credentialId);
  // had the owner not come back, the watcher takes it once it watched a whole lease
  await Bun.sleep(400);
  watchedMs = 300;
  expect((await back.heartbeat()).owned).toContain(credentialId);
  await back.releaseAll();
  await owner.releaseAll();
});
