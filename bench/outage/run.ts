// bench/outage: Postgres away while calls are live, as a user sees it. Every process (the API, two
// bridges, the hook worker) reaches Postgres through one TCP proxy, which is cut (connections reset,
// then refused) and then black-holed (silence), each for --seconds, with the production defaults
// (DATABASE_TIMEOUT_MS 5000, heartbeat 2 s, TTL 10 s) unless given.
//   bun run bench outage [--seconds 20] [--live 10] [--ending 10]
// Per variant: the longest API answer during the outage, the time to the first 200 after it, the
// longest wait for agent audio of a live call, and the rate at which the hooks of the calls that ended
// during the outage arrive after the return. A scratch database is created and dropped.
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { dropDatabase, migrateDatabase } from "../../src/db/migrate";
import { runOutage, startOutageWorld, type OutageReport, type Variant } from "../../test/outage/outage-world";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "20" },
    live: { type: "string", default: "10" },
    ending: { type: "string", default: "10" },
    "timeout-ms": { type: "string", default: "5000" },
  },
});
const server = process.env.TEST_DATABASE_SERVER ?? "postgres://postgres@127.0.0.1:5432";
process.env.DATABASE_URL = `${server}/vas_bench_outage_${process.pid}`;
process.env.ADMIN_TOKEN ||= `admin_${randomBytes(16).toString("hex")}`;
process.env.ENCRYPTION_KEY ||= randomBytes(32).toString("hex");
process.env.OUTBOUND_ALLOW_CIDRS ||= "127.0.0.0/8";
process.env.LOG_LEVEL ||= "warn";
const say = (msg: string) => console.error(`[bench/outage] ${msg}`);

const settings = { databaseTimeoutMs: Number(values["timeout-ms"]), heartbeatMs: 2_000, heartbeatTtlMs: 10_000 };
const options = { outageMs: Number(values.seconds) * 1000, live: Number(values.live), ending: Number(values.ending) };

say("scratch database");
await migrateDatabase(process.env.DATABASE_URL);
say("starting the API, two bridges and the hook worker behind the proxy");
const world = await startOutageWorld(settings);
const reports: OutageReport[] = [];
try {
  for (const variant of ["refused", "black-holed"] as Variant[]) {
    say(`${variant}: ${options.live} live and ${options.ending} ending calls per bridge, ${values.seconds} s outage`);
    const progress = setInterval(() => say(`  ${variant}: under way`), 5_000);
    reports.push(await runOutage(world, variant, options).finally(() => clearInterval(progress)));
    if (world.exited().length) throw new Error(`processes exited: ${world.exited().join(", ")}`);
  }
} finally {
  await world.stop();
  await dropDatabase(process.env.DATABASE_URL);
}

const ms = (x: number) => `${Math.round(x)} ms`;
const rows = reports.map((r) => {
  const statuses = [...new Set(r.apiAnswers.map((a) => a.status))].join("/");
  return {
    variant: r.variant,
    "API answers (status)": `${r.apiAnswers.length} (${statuses})`,
    "longest API answer": ms(Math.max(...r.apiAnswers.map((a) => a.ms))),
    "/readyz": `${r.readyz.status} in ${ms(r.readyz.ms)}`,
    "new call": `close ${r.newCall.code} in ${ms(r.newCall.ms)}`,
    "first 200 after return": ms(r.firstOkAfterReturnMs),
    "longest audio gap": ms(r.longestAudioGapMs),
    "hooks/s after return": r.hooksPerSecond.toFixed(1),
    "call_concluded per ended call": [...new Set(r.concludedCounts)].join("/"),
    "call_concluded sent again": r.concludedResent,
    "live tasks after": [...new Set(r.liveStatuses)].join("/"),
  };
});
console.log(
  "bench/outage: no baseline process; each figure against its limit in design.md (an API answer within DATABASE_TIMEOUT_MS, /readyz 503 within 1 s, a new call served or refused within 2 s, all back within 5 s of the return, live calls' audio unbroken).",
);
console.log(`DATABASE_TIMEOUT_MS ${settings.databaseTimeoutMs}, heartbeat TTL ${settings.heartbeatTtlMs} ms`);
console.table(rows);
