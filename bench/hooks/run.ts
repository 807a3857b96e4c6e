// bench/hooks: 1,000 call_concluded events emitted at once through the whole path (outbox, dispatcher,
// Temporal, worker, HTTP) to a local 2xx receiver, next to a plain loop POSTing the same bodies.
//   bun bench/hooks/run.ts [--events 1000]
// Uses TEMPORAL_ADDRESS when set, else starts a dev server; a scratch database is created and dropped.
import { count, eq, sql } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { createDb } from "../../src/db/client";
import { dropDatabase, migrateDatabase } from "../../src/db/migrate";
import { hookDeliveries } from "../../src/db/schema";
import { serializePayload } from "../../src/events/payloads";
import { sendHook } from "../../src/events/send-hook";
import { createOutboundGuard } from "../../src/net/outbound-guard";
import { startReceiver } from "../../test/helpers/receiver";
import { ensureTemporal, startWorker } from "../../test/helpers/temporal";
import { at, callConcluded, createAssistantWithHooks, emit } from "../../test/hooks/fixtures";
import { percentile as pct } from "../lib/harness";

const { values } = parseArgs({ options: { events: { type: "string", default: "1000" } } });
const N = Number(values.events);
const SINGLES = 50;
const server = process.env.TEST_DATABASE_SERVER ?? "postgres://postgres@127.0.0.1:5432";
const databaseUrl = `${server}/vas_bench_hooks_${process.pid}`;
process.env.DATABASE_URL = databaseUrl;
process.env.ENCRYPTION_KEY ||= randomBytes(32).toString("hex");
// the receiver listens on loopback, which the outbound guard refuses by default
process.env.OUTBOUND_ALLOW_CIDRS ||= "127.0.0.0/8";
const say = (msg: string) => console.error(`[bench/hooks] ${msg}`);
const ms = (x: number) => `${x.toFixed(1)} ms`;

say(`scratch database, Temporal, worker (node) and receiver`);
await migrateDatabase(databaseUrl);
const { db, close } = createDb(databaseUrl, { max: 20 });
const receiver = await startReceiver(() => ({ status: 204 }));
const { address } = await ensureTemporal();
const worker = await startWorker({ address, backoffBaseMs: 60_000, timeoutMs: 30_000, env: { LOG_LEVEL: "info" } });

try {
  const a = await createAssistantWithHooks(db, [{ url: `${receiver.url}/hook`, secret: "whsec_" + randomBytes(24).toString("base64") }]);
  const events = Array.from({ length: N }, () => callConcluded());

  say(`emitting ${N} call_concluded events at once`);
  const emittedAt = new Map<string, number>();
  const t0 = performance.timeOrigin + performance.now();
  await Promise.all(
    events.map(async (event) => {
      await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event });
      emittedAt.set(event.callId, performance.timeOrigin + performance.now());
    }),
  );
  const emitDone = performance.timeOrigin + performance.now();
  say(`all emitted in ${ms(emitDone - t0)}; waiting for SUCCEEDED`);

  let succeeded = 0;
  while (succeeded < N) {
    await new Promise((r) => setTimeout(r, 500));
    succeeded = at(await db.select({ n: count() }).from(hookDeliveries).where(eq(hookDeliveries.status, "SUCCEEDED"))).n;
    const elapsed = (performance.timeOrigin + performance.now() - t0) / 1000;
    say(`  ${succeeded}/${N} SUCCEEDED, ${receiver.requests.length} received, ${elapsed.toFixed(1)} s`);
    if (elapsed > 300) throw new Error("gave up after 300 s");
  }
  // when the last SUCCEEDED was recorded (database clock, same host)
  const { last } = at(await db.execute<{ last: string }>(sql`select max(updated_at) as last from hook_deliveries`));
  const total = (new Date(last).getTime() - t0) / 1000;
  const firstByte = receiver.requests.map((r) => r.receivedAt - emittedAt.get(JSON.parse(r.body.toString()).callId)!);

  say(`one at a time: ${SINGLES} events, each emitted once the previous one has arrived`);
  const single: number[] = [];
  for (let i = 0; i < SINGLES; i++) {
    const seen = receiver.requests.length;
    const start = performance.timeOrigin + performance.now();
    await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() });
    const [req] = (await receiver.waitForRequests(seen + 1, 30_000)).slice(seen);
    single.push(req!.receivedAt - start);
  }

  say(`baseline: a plain loop POSTing the same ${N} bodies to the receiver`);
  const bodies = events.map((e) => Buffer.from(serializePayload(e)));
  const before = receiver.requests.length;
  const b0 = performance.now();
  const sentAt: number[] = [];
  const guard = createOutboundGuard({ allowCidrs: ["127.0.0.0/8"] });
  for (const body of bodies) {
    sentAt.push(performance.timeOrigin + performance.now());
    const res = await sendHook({ url: `${receiver.url}/baseline`, method: "POST", headers: {}, body, timeoutMs: 30_000, guard });
    if (!res.ok) throw new Error(`baseline request failed: ${res.error ?? res.statusCode}`);
  }
  const baselineS = (performance.now() - b0) / 1000;
  const baselineFirstByte = receiver.requests.slice(before).map((r, i) => r.receivedAt - sentAt[i]!);

  const rows = [
    ["", "hooks (emit -> SUCCEEDED)", "baseline (plain POST loop)"],
    ["events", String(N), String(N)],
    ["wall time", `${total.toFixed(2)} s`, `${baselineS.toFixed(2)} s`],
    ["events/s", (N / total).toFixed(0), (N / baselineS).toFixed(0)],
    ["first byte p50", ms(pct(firstByte, 50)), ms(pct(baselineFirstByte, 50))],
    ["first byte p99", ms(pct(firstByte, 99)), ms(pct(baselineFirstByte, 99))],
    ["requests received", String(firstByte.length), String(receiver.requests.length - before)],
    [`idle p50 / p99`, `${ms(pct(single, 50))} / ${ms(pct(single, 99))}`, "-"],
  ];
  console.log(rows.map((r) => r.map((c, i) => c.padEnd(i === 0 ? 18 : 28)).join("")).join("\n"));
  console.log(`first byte: from the emit's commit (baseline: from the send) to the request head at the receiver`);
  console.log(`idle: emit-to-first-byte of ${SINGLES} events emitted one at a time after the burst`);
} finally {
  const problems = worker.lines.filter((l) => l.level === "warn" || l.level === "error");
  if (problems.length) say(`worker warnings: ${problems.length}, first: ${JSON.stringify(problems.slice(0, 3))}`);
  await worker.kill();
  await receiver.close();
  await close();
  await dropDatabase(databaseUrl);
  process.exit(0);
}
