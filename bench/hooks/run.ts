// bench/hooks: call_concluded events through the whole path (outbox, dispatcher, Temporal, worker, HTTP)
// to a local 2xx receiver, on each Temporal engine given, next to a plain loop POSTing the same bodies.
//   bun run bench hooks [--events 1000] [--postgres 127.0.0.1:7233] [--leave-others]
// The dev server (on a SQLite file, WAL) is started here unless TEMPORAL_ADDRESS is set; --postgres adds
// a server started by scripts/temporal-postgres.sh. A scratch database is created and dropped.
import { sql } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { dropDatabase, migrateDatabase } from "../../src/db/migrate";
import { serializePayload } from "../../src/events/payloads";
import { sendHook } from "../../src/events/send-hook";
import { createOutboundGuard } from "../../src/net/outbound-guard";
import { connectTemporal } from "../../src/temporal/client";
import { runsWorker } from "../../src/temporal/worker-build";
import { startReceiver, type ReceivedRequest } from "../../test/helpers/receiver";
import { ensureTemporal, startWorker } from "../../test/helpers/temporal";
import { at, callConcluded, createAssistantWithHooks, emit } from "../../test/hooks/fixtures";
import { hookDeliveryWorkflowId } from "../../workflows/ids";
import { cpuSecondsMatching } from "../calls-ws/proc-stats";
import { yieldOthers } from "../lib/evict";
import { percentile as pct } from "../lib/harness";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "1000" },
    postgres: { type: "string" },
    "leave-others": { type: "boolean" },
  },
});
const N = Number(values.events);
const SINGLES = 50;
// long enough for the previous event's workflow start (gathered 100 ms) to be over
const SPACED_MS = 250;
const server = process.env.TEST_DATABASE_SERVER ?? "postgres://postgres@127.0.0.1:5432";
const databaseUrl = `${server}/vas_bench_hooks_${process.pid}`;
process.env.DATABASE_URL = databaseUrl;
process.env.ENCRYPTION_KEY ||= randomBytes(32).toString("hex");
// the receiver listens on loopback, which the outbound guard refuses by default
process.env.OUTBOUND_ALLOW_CIDRS ||= "127.0.0.0/8";
const say = (msg: string) => console.error(`[bench/hooks] ${msg}`);
const ms = (x: number) => `${x.toFixed(1)} ms`;
const now = () => performance.timeOrigin + performance.now();
/** Who uses the 2 cores during the burst: CPU seconds per part of the path, read from /proc. */
const parts: Record<string, (cmdline: string) => boolean> = {
  postgres: (c) => c.startsWith("postgres"),
  "temporal server": (c) => /temporal-server |temporal.* start-dev/.test(c),
  "node worker": runsWorker,
  "bench (emit, receiver)": (c) => c.includes("bench/hooks"),
};
/** Waits until the given parts use under 5 % of a core over half a second (at most 60 s). */
async function untilQuiet(names: string[]) {
  const busy = () => names.reduce((sum, name) => sum + cpuSecondsMatching(parts[name]!), 0);
  for (const deadline = now() + 60_000; now() < deadline; ) {
    const before = busy();
    await Bun.sleep(500);
    if (busy() - before < 0.025) return;
  }
}
const cpuByPart = () => Object.fromEntries(Object.entries(parts).map(([k, m]) => [k, cpuSecondsMatching(m)]));

// the machine's other processes (a shared machine) take only what this bench leaves, until it exits
const others = values["leave-others"] ? null : yieldOthers();
if (others) say(`${others.moved} other processes in the idle class until the end (--leave-others: not)`);
process.once("exit", () => others?.restore());
say("scratch database");
await migrateDatabase(databaseUrl);
// the emitter stands for every bridge concluding calls at once: 10,000 transactions queue for its 20
// connections longer than the default 5 s statement deadline (which then failed the burst), and that
// queue is not what is measured (first attempts count from each emit's commit)
const { db, close } = createDb(databaseUrl, { max: 20, timeoutMs: 120_000 });

type Result = {
  deliveredS: number;
  startedS: number;
  emitS: number;
  firstByte: number[];
  duplicates: number;
  idle: number[];
  spaced: number[];
  historyEvents: number;
  warnings: number;
  /** CPU seconds per part from the emit to the last event's arrival */
  burstCpu: Record<string, number>;
};

const bodyCallId = (r: ReceivedRequest) => JSON.parse(r.body.toString()).callId as string;

async function runEngine(label: string, address: string): Promise<Result> {
  say(`${label}: worker (node) on ${address}`);
  const receiver = await startReceiver(() => ({ status: 204 }));
  const worker = await startWorker({ address, backoffBaseMs: 60_000, timeoutMs: 30_000 });
  try {
    const a = await createAssistantWithHooks(db, [
      { url: `${receiver.url}/hook`, secret: `whsec_${randomBytes(24).toString("base64")}` },
    ]);
    const events = Array.from({ length: N }, () => callConcluded());

    say(`${label}: emitting ${N} call_concluded events at once`);
    const emittedAt = new Map<string, number>();
    const cpuBefore = cpuByPart();
    const t0 = now();
    const ids = await Promise.all(
      events.map(async (event) => {
        const { deliveryIds } = await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event });
        emittedAt.set(event.callId, now());
        return deliveryIds;
      }),
    );
    const emitS = (now() - t0) / 1000;
    say(`${label}: emitted in ${emitS.toFixed(2)} s; waiting until every event has reached the receiver`);
    const firstSeen = new Map<string, number>();
    for (let seen = 0; firstSeen.size < N; ) {
      await new Promise((r) => setTimeout(r, 200));
      for (const r of receiver.requests.slice(seen))
        if (!firstSeen.has(bodyCallId(r))) firstSeen.set(bodyCallId(r), r.receivedAt);
      seen = receiver.requests.length;
      if (now() - t0 > 300_000) throw new Error(`${label}: ${firstSeen.size}/${N} delivered after 300 s`);
    }
    const deliveredS = (Math.max(...firstSeen.values()) - t0) / 1000;
    const cpuAfter = cpuByPart();
    const burstCpu = Object.fromEntries(Object.keys(parts).map((k) => [k, cpuAfter[k]! - cpuBefore[k]!]));
    // workflows start behind the first attempts: wait for the last one
    for (;;) {
      const { unstarted } = at(
        await db.execute<{ unstarted: number }>(
          sql`select count(*)::int as unstarted from hook_deliveries where dispatched_at is null`,
        ),
      );
      if (Number(unstarted) === 0) break;
      if (now() - t0 > 300_000) throw new Error(`${label}: ${unstarted} workflows not started after 300 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // when the dispatcher had started the last workflow (database clock, same host)
    const { last } = at(
      await db.execute<{ last: number }>(
        sql`select extract(epoch from max(dispatched_at)) * 1000 as last from hook_deliveries`,
      ),
    );
    const startedS = (Number(last) - t0) / 1000;
    const firstByte = [...firstSeen].map(([callId, at]) => at - emittedAt.get(callId)!);
    // let late duplicates (attempts re-run after a lost workflow task) show up before counting them
    await new Promise((r) => setTimeout(r, 2_000));
    const duplicates = receiver.requests.length - N;

    const temporal = await connectTemporal({ temporal: { ...loadConfig().temporal, address } });
    const described = await temporal.client.workflow.getHandle(hookDeliveryWorkflowId(ids[0]![0]!, 1)).describe();
    await temporal.close();

    // the burst's workflows still run their first tasks after their start: single events are measured
    // once the worker and the Temporal server have gone quiet
    await untilQuiet(["node worker", "temporal server"]);
    say(`${label}: one at a time: ${SINGLES} events back to back, then ${SINGLES} spaced ${SPACED_MS} ms apart`);
    /** emit-to-first-byte of SINGLES events, each emitted `gapMs` after the previous one arrived */
    const oneAtATime = async (gapMs: number) => {
      const took: number[] = [];
      for (let i = 0; i < SINGLES; i++) {
        await Bun.sleep(gapMs);
        const seen = receiver.requests.length;
        const start = now();
        await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() });
        const [req] = (await receiver.waitForRequests(seen + 1, 30_000)).slice(seen);
        took.push(req!.receivedAt - start);
      }
      return took;
    };
    const idle = await oneAtATime(0);
    const spaced = await oneAtATime(SPACED_MS);
    const warnings = worker.lines.filter((l) => l.level === "warn" || l.level === "error");
    if (warnings.length)
      say(`${label}: ${warnings.length} worker warnings, first: ${JSON.stringify(warnings.slice(0, 3))}`);
    return {
      deliveredS,
      startedS,
      emitS,
      firstByte,
      duplicates,
      idle,
      spaced,
      historyEvents: described.historyLength,
      warnings: warnings.length,
      burstCpu,
    };
  } finally {
    await worker.kill();
    await receiver.close();
    // the next engine starts from an empty outbox
    await db.execute(sql`truncate hook_deliveries, hook_event_bodies cascade`);
  }
}

async function baseline() {
  say(`baseline: a plain loop POSTing ${N} bodies to the receiver`);
  const receiver = await startReceiver(() => ({ status: 204 }));
  const guard = createOutboundGuard({ allowCidrs: ["127.0.0.0/8"] });
  const bodies = Array.from({ length: N }, () => Buffer.from(serializePayload(callConcluded())));
  const sentAt: number[] = [];
  const t0 = now();
  for (const body of bodies) {
    sentAt.push(now());
    const res = await sendHook({
      url: `${receiver.url}/baseline`,
      method: "POST",
      headers: {},
      body,
      timeoutMs: 30_000,
      guard,
    });
    if (!res.ok) throw new Error(`baseline request failed: ${res.error ?? res.statusCode}`);
  }
  const totalS = (now() - t0) / 1000;
  const firstByte = receiver.requests.map((r, i) => r.receivedAt - sentAt[i]!);
  await receiver.close();
  return { totalS, firstByte };
}

try {
  const engines: [string, string][] = [
    [process.env.TEMPORAL_ADDRESS ? "TEMPORAL_ADDRESS" : "dev server (SQLite WAL)", (await ensureTemporal()).address],
  ];
  if (values.postgres) engines.push(["Temporal on Postgres", values.postgres]);
  const results: [string, Result][] = [];
  for (const [label, address] of engines) results.push([label, await runEngine(label, address)]);
  const base = await baseline();

  const rows: string[][] = [
    ["", ...results.map(([label]) => label), "plain POST loop"],
    [
      `${N} events at once: all delivered`,
      ...results.map(([, r]) => `${r.deliveredS.toFixed(2)} s`),
      `${base.totalS.toFixed(2)} s`,
    ],
    ["  events/s", ...results.map(([, r]) => (N / r.deliveredS).toFixed(0)), (N / base.totalS).toFixed(0)],
    ["  emit (outbox) took", ...results.map(([, r]) => `${r.emitS.toFixed(2)} s`), "-"],
    ["  all workflows started after", ...results.map(([, r]) => `${r.startedS.toFixed(2)} s`), "-"],
    ["  first attempt p50", ...results.map(([, r]) => ms(pct(r.firstByte, 50))), ms(pct(base.firstByte, 50))],
    ["  first attempt p99", ...results.map(([, r]) => ms(pct(r.firstByte, 99))), ms(pct(base.firstByte, 99))],
    ["  duplicate requests", ...results.map(([, r]) => String(r.duplicates)), "0"],
    [`one at a time p50 / p99`, ...results.map(([, r]) => `${ms(pct(r.idle, 50))} / ${ms(pct(r.idle, 99))}`), "-"],
    [
      `  spaced ${SPACED_MS} ms p50 / p99`,
      ...results.map(([, r]) => `${ms(pct(r.spaced, 50))} / ${ms(pct(r.spaced, 99))}`),
      "-",
    ],
    ...Object.keys(parts).map((part) => [
      `  CPU in the burst: ${part}`,
      ...results.map(
        ([, r]) => `${r.burstCpu[part]!.toFixed(2)} s (${((r.burstCpu[part]! / N) * 1000).toFixed(2)} ms/event)`,
      ),
      "-",
    ]),
    // what bounds the burst: the parts' CPU against the machine's cores over the burst
    [
      `  cores busy in the burst (of ${cpus().length})`,
      ...results.map(([, r]) => (Object.values(r.burstCpu).reduce((a, b) => a + b, 0) / r.deliveredS).toFixed(2)),
      "-",
    ],
    ["history events / delivery", ...results.map(([, r]) => String(r.historyEvents)), "-"],
    ["worker warnings", ...results.map(([, r]) => String(r.warnings)), "-"],
  ];
  console.log(rows.map((r) => r.map((c, i) => c.padEnd(i === 0 ? 34 : 26)).join("")).join("\n"));
  console.log("first attempt: from the emit's commit (loop: from the send) to the request head at the receiver");
  console.log(
    `one at a time: emit-to-first-byte of ${SINGLES} events, each emitted once the previous one has arrived (back to back: its workflow start runs meanwhile) or ${SPACED_MS} ms after, after the burst`,
  );
} catch (error) {
  // said, not swallowed by the exit below: a burst that failed (e.g. Postgres past its deadlines) printed nothing
  say(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
} finally {
  await close();
  await dropDatabase(databaseUrl);
  process.exit();
}
