// bench/api: our read path against a bare postgres.js baseline, measured side by side with wrk, and the
// cost of the HTTP conventions (issue 30) on our server alone.
//   bun bench/api/run.ts [--seconds 10] [--connections 32]
// Seeds 10,000 assistants (one tool and one hook each) into a scratch database, then loads
// GET P/assistants/{id} and GET P/assistants?size=20 on three servers, one after the other: ours, ours
// with READ_MODEL=false (every read from Postgres, writes wait for nobody) and the baseline. Then on ours:
// GET by id answered 304 through If-None-Match, PUT P/assistants/{id} and POST P/assistants (on both of
// ours: what the read model's wait for acknowledgements costs a write), POST with a new Idempotency-Key
// per request (claim + sealed response kept), and with one repeated key (every answer a replay).
// Last, a call start's database time: the bridge's read of an assistant (loadCallAssistant) in this
// process, from Postgres (cold) and from the read model (cached); and what Idempotency-Key adds to one
// POST, from sequential POSTs without a key, with a new key and replayed, in turn. Targets (issue 28): by id >= 1.5x the
// baseline with p99 < 5 ms, list >= 0.9x with p99 < 10 ms. The load average is printed with the table.
// Cores (bench/lib/pinning.ts, --sut-cpus 0 --load-cpus 1 by default on 2 cores): the three servers and
// this database's Postgres backends on the SUT cores, wrk (and this process) on the load cores; each
// case's where-ran is checked, and a case whose load side saturated its cores is marked INVALID.
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import postgres from "postgres";
import { dropDatabase, migrateDatabase } from "../../src/db/migrate";
import { createDb, readModelOf } from "../../src/db/client";
import { loadCallAssistant } from "../../src/calls/load-assistant";
import { freePort } from "../../test/helpers/temporal";
import { processTree } from "../calls-sip/proc-tree";
import { onCpus, pin, pinningFrom, pinningOptions, postgresBackends, watchCores } from "../lib/pinning";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
    ...pinningOptions,
  },
});
const pinning = pinningFrom(values);
// this process and what it starts (wrk) on the load cores
pin(process.pid, pinning.load);
const server = process.env.TEST_DATABASE_SERVER ?? "postgres://postgres@127.0.0.1:5432";
// one database per run: benches of several worktrees may run on one machine
const databaseName = `vas_bench_api_${process.pid}`;
const databaseUrl = `${server}/${databaseName}`;
const admin = `admin_${randomBytes(8).toString("hex")}`;
const say = (msg: string) => console.error(`[bench/api] ${msg}`);

say("creating the database and 10,000 assistants");
await dropDatabase(databaseUrl);
await migrateDatabase(databaseUrl);
const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
const [{ id: vendorId }] = (await sql`insert into vendors (name) values ('bench') returning id`) as [{ id: string }];
const [{ id: orgId }] =
  (await sql`insert into organizations (vendor_id, name) values (${vendorId}, 'bench') returning id`) as [
    { id: string },
  ];
await sql`insert into assistants (organization_id, kind, name, system_prompt, system_prompt_greeting)
  select ${orgId}, 'assistant', 'assistant ' || lpad(i::text, 5, '0'), 'You are assistant ' || i, 'Hello!' from generate_series(1, 10000) i`;
await sql`insert into extensions (assistant_id, position, type, name, parameters)
  select id, 0, 'tool_webhook', 'lookup', '{"name":"lookup","serverUrl":"https://example.com/t","schema":"{}"}'::jsonb from assistants`;
await sql`insert into call_event_hooks (assistant_id, position, type, parameters)
  select id, 0, 'call_concluded', '{"url":"https://example.com/h"}'::jsonb from assistants`;
const ids = (await sql`select id from assistants order by random() limit 200`).map((r) => r.id as string);
// as autovacuum would have: lets counts use index-only scans
await sql`vacuum analyze`;
await sql.end();

const env = {
  ...process.env,
  DATABASE_URL: databaseUrl,
  ADMIN_TOKEN: admin,
  ENCRYPTION_KEY: randomBytes(32).toString("hex"),
  // one token loads the server: the per-token rate (API_TOKEN_RATE) would measure itself
  API_TOKEN_RATE: "0",
};
const tokenProc = Bun.spawnSync(["bun", "src/cli/token-create.ts", "--vendor", vendorId, "--organization", orgId], {
  env,
});
const token = tokenProc.stdout.toString().trim();

async function startServer(args: string[], port: number, extra: Record<string, string> = {}) {
  const [command, ...rest] = onCpus(pinning.sut, ["bun", ...args]);
  const proc = spawn(command!, rest, {
    env: { ...env, ...extra, PORT: String(port) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  // a loaded machine has taken over 10 s to start ours (migrations first)
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(`http://127.0.0.1:${port}/healthz`).then(
        () => true,
        () => false,
      )
    )
      return proc;
    await Bun.sleep(100);
  }
  proc.kill();
  throw new Error(`server ${args.join(" ")} did not start`);
}

const luaFile = `/tmp/vas-bench-api-${process.pid}.lua`;
/** MODE: one (GET by id), etag (the same with If-None-Match: its ETag), list, put, post, post-key, replay. */
async function writeLua(etags: string[]) {
  const quoted = (values: string[]) => values.map((v) => JSON.stringify(v)).join(",");
  await Bun.write(
    luaFile,
    `local ids = {${quoted(ids)}}
local etags = {${quoted(etags)}}
local prefix = os.getenv("PREFIX")
local mode = os.getenv("MODE")
local counter = 0
-- every thread's Lua state starts alike: keys are told apart by the thread number setup() gives
local threads = 0
setup = function(thread)
  threads = threads + 1
  thread:set("thread", threads)
end
request = function()
  local headers = { ["Authorization"] = "Bearer ${token}" }
  if mode == "post" or mode == "post-key" or mode == "replay" then
    headers["Content-Type"] = "application/json"
    counter = counter + 1
    if mode == "post-key" then headers["Idempotency-Key"] = string.format("bench-%d-%d-%d", os.time(), thread, counter) end
    if mode == "replay" then headers["Idempotency-Key"] = "bench-replay" end
    return wrk.format("POST", prefix, headers, '{"name":"bench"}')
  end
  if mode == "put" then
    headers["Content-Type"] = "application/json"
    return wrk.format("PUT", prefix .. "/" .. ids[math.random(#ids)], headers, '{"name":"bench"}')
  end
  local path = prefix
  if mode == "one" or mode == "etag" then
    local i = math.random(#ids)
    path = prefix .. "/" .. ids[i]
    if mode == "etag" then headers["If-None-Match"] = etags[i] end
  end
  return wrk.format("GET", path, headers)
end`,
  );
}

type Result = { rps: number; p50: number; p99: number; errors: number };
type Mode = "one" | "etag" | "list" | "put" | "post" | "post-key" | "replay";
/** wrk to completion, without blocking this event loop (the core watch samples meanwhile). */
async function wrk(url: string, mode: Mode, prefix: string): Promise<Result> {
  const run = Bun.spawn(
    [
      "wrk",
      `-t${Math.min(2, Number(values.connections))}`,
      `-c${values.connections}`,
      `-d${values.seconds}s`,
      "--latency",
      "-s",
      luaFile,
      url,
    ],
    {
      env: { ...process.env, MODE: mode, PREFIX: prefix },
      stderr: "pipe",
    },
  );
  const [out, stderr] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text()]);
  const ms = (label: string) => {
    const m = new RegExp(`${label}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) throw new Error(`wrk output without ${label}%:\n${out}${stderr}`);
    return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
  };
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1];
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]),
    p50: ms("50"),
    p99: ms("99"),
    errors: Number(errors ?? 0),
  };
}

const P = `/api/v1/vendors/${vendorId}/organizations/${orgId}/assistants`;
const cases = [
  { name: "GET P/assistants/{id}", mode: "one" as const, ours: P, base: "/assistants" },
  { name: "GET P/assistants?size=20", mode: "list" as const, ours: `${P}?size=20`, base: `/assistants?org=${orgId}` },
];

// writes on both of ours: the read model's wait (acknowledgements) against none
const writes = [
  { name: "PUT P/assistants/{id}", mode: "put" as const },
  { name: "POST P/assistants", mode: "post" as const },
];
// the conventions' cost, on our server only (the baseline has no such thing)
const oursOnly = [
  { name: "GET P/assistants/{id}, If-None-Match: its ETag (304)", mode: "etag" as const },
  { name: "POST P/assistants, a new Idempotency-Key each", mode: "post-key" as const },
  { name: "POST P/assistants, one repeated key (replays)", mode: "replay" as const },
];

const [oursPort, plainPort, basePort] = [await freePort(), await freePort(), await freePort()];
const [oursUrl, plainUrl, baseUrl] = [oursPort, plainPort, basePort].map((port) => `http://127.0.0.1:${port}`) as [
  string,
  string,
  string,
];
// a server that does not start leaves no scratch database behind (nor the others)
const giveUp = async (error: unknown, ...running: { kill(): unknown }[]) => {
  for (const proc of running) proc.kill();
  await dropDatabase(databaseUrl);
  throw error;
};
const ours = await startServer(["src/index.ts"], oursPort).catch((error) => giveUp(error));
const plain = await startServer(["src/index.ts"], plainPort, { READ_MODEL: "false" }).catch((error) =>
  giveUp(error, ours),
);
const baseline = await startServer(["bench/api/baseline-server.ts"], basePort).catch((error) =>
  giveUp(error, ours, plain),
);
const servers = [ours.pid!, plain.pid!, baseline.pid!];
const etags = await Promise.all(
  ids.map(async (id) => {
    const res = await fetch(`${oursUrl}${P}/${id}`, { headers: { authorization: `Bearer ${token}` } });
    return res.headers.get("etag") ?? "";
  }),
);
await writeLua(etags);
let callStart = "";
let keyCost = "";
const rows: string[] = [];
const cell = (r: Result) => `${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)}`;
const ratio = (a: Result, b: Result) => `${(a.rps / b.rps).toFixed(2)}x`;
const loads = [loadavg()];
/** where each process ran during the measured runs: the servers and our Postgres backends (SUT), wrk (load) */
const invalid: string[] = [];
const watched = () =>
  watchCores(pinning, [
    { label: "bench and wrk", side: "load", pids: () => processTree(process.pid).filter((p) => !servers.includes(p)) },
    { label: "servers (ours x2, baseline)", side: "sut", pids: () => servers },
    {
      label: "postgres (this database)",
      side: "sut",
      pids: () => postgresBackends(databaseName),
      pinNew: true,
      optional: true,
    },
  ]);
/** a warm-up run, then the measured one */
const measure = async (url: string, mode: Mode, prefix: string, who: string, name: string) => {
  say(`${name}: ${who}, ${values.seconds}s with ${values.connections} connections`);
  await wrk(url, mode, prefix);
  const cores = watched();
  const r = await wrk(url, mode, prefix);
  const report = cores.stop();
  if (!report.valid) invalid.push(`${name} (${who})`);
  say(report.text);
  if (r.errors) say(`${name}: ${who}: ${r.errors} non-2xx/3xx answers`);
  return r;
};
try {
  for (const c of cases) {
    const a = await measure(oursUrl, c.mode, c.ours, "ours", c.name);
    const p = await measure(plainUrl, c.mode, c.ours, "ours, READ_MODEL=false", c.name);
    const b = await measure(baseUrl, c.mode, c.base, "baseline", c.name);
    rows.push(`| ${c.name} | ${cell(a)} | ${cell(p)} | ${cell(b)} | ${ratio(a, b)} | ${ratio(p, b)} |`);
  }
  for (const c of writes) {
    const a = await measure(oursUrl, c.mode, P, "ours", c.name);
    const p = await measure(plainUrl, c.mode, P, "ours, READ_MODEL=false", c.name);
    rows.push(`| ${c.name} | ${cell(a)} | ${cell(p)} | – | – | – | – | – |`);
  }
  loads.push(loadavg());
  for (const c of oursOnly) {
    say(`${c.name}: warming up`);
    await wrk(oursUrl, c.mode, P);
    say(`${c.name}: ours, ${values.seconds}s with ${values.connections} connections`);
    const a = await wrk(oursUrl, c.mode, P);
    if (a.errors) say(`non-2xx/3xx answers: ${a.errors}`);
    rows.push(`| ${c.name} | ${cell(a)} | – | – | – | – | – | – | – | – |`);
  }
  loads.push(loadavg());
  callStart = await measureCallStart();
  keyCost = await measureKeyCost();
} finally {
  ours.kill();
  plain.kill();
  baseline.kill();
  await dropDatabase(databaseUrl);
}
console.log(
  `bench/api: wrk, ${values.connections} connections, ${values.seconds} s per case, one after the other on this machine.`,
);
console.log(
  "ours: bun src/index.ts (auth, tenancy, validation, envelope, logging, the read model); ours, READ_MODEL=false: the same reading Postgres every time; baseline: bench/api/baseline-server.ts (Bun.serve + postgres.js, the same query, nothing else).",
);
console.log(
  `load average (1 min) at the start, after the side-by-side cases, at the end: ${loads.map((l) => l[0]!.toFixed(2)).join(", ")} (${navigator.hardwareConcurrency} cores, a shared machine); servers and this database's Postgres backends on SUT cores ${pinning.sut}, wrk on ${pinning.load}; ${invalid.length ? `INVALID (load side saturated or misplaced): ${invalid.join(", ")}` : "every measured case valid"}\n`,
);
console.log(
  "| case | ours req/s | p50 ms | p99 ms | READ_MODEL=false req/s | p50 ms | p99 ms | baseline req/s | p50 ms | p99 ms | ours/baseline | READ_MODEL=false/baseline |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const row of rows) console.log(row);
console.log(`\n${callStart}`);

/**
 * A call start's read of its assistant (strategy, tools), as the bridge makes it, in this process:
 * each of the ids from Postgres (cold), then again from the read model once it is synced (cached).
 */
async function measureCallStart() {
  const { db, close } = createDb(databaseUrl, { max: 2, name: "bench" });
  const timed = async () => {
    const ms: number[] = [];
    for (const id of ids) {
      const t0 = performance.now();
      await loadCallAssistant(db, "assistant", id);
      ms.push(performance.now() - t0);
    }
    ms.sort((x, y) => x - y);
    return `mean ${(ms.reduce((x, y) => x + y, 0) / ms.length).toFixed(3)} ms, p99 ${ms[Math.floor(ms.length * 0.99)]!.toFixed(3)} ms`;
  };
  try {
    const cold = await timed();
    // synced: its own tick has come back (a few ms)
    while (!readModelOf(db).trusted()) await Bun.sleep(5);
    const cached = await timed();
    return `call start's read of its assistant (loadCallAssistant, ${ids.length} assistants one after another): cold (Postgres) ${cold}; cached (read model) ${cached}.`;
  } finally {
    await close();
  }
}
console.log(`\n${keyCost}`);

/**
 * What Idempotency-Key adds to a POST's latency: one client, one request at a time, a POST without a
 * key, one with a new key and one repeating a key (a replay) in turn, so that all three meet the same
 * machine (under wrk, POSTs from different 10 s windows differ by more than the key costs).
 */
async function measureKeyCost() {
  const rounds = 300;
  const times = { none: [] as number[], key: [] as number[], replay: [] as number[] };
  const post = async (key: string | null) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    if (key) headers["idempotency-key"] = key;
    const t0 = performance.now();
    const res = await fetch(`${oursUrl}${P}`, { method: "POST", headers, body: '{"name":"bench-key"}' });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`POST answered ${res.status}`);
    return performance.now() - t0;
  };
  await post("bench-key-replay");
  for (let i = 0; i < rounds; i++) {
    times.none.push(await post(null));
    times.key.push(await post(`bench-key-${process.pid}-${i}`));
    times.replay.push(await post("bench-key-replay"));
  }
  const p50 = (ms: number[]) => ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
  const [none, key, replay] = [p50(times.none), p50(times.key), p50(times.replay)];
  return `Idempotency-Key, ${rounds} sequential POSTs of each kind in turn: p50 without a key ${none.toFixed(2)} ms, with a new key ${key.toFixed(2)} ms (adds ${(key - none).toFixed(2)} ms; target < 1 ms), a replay ${replay.toFixed(2)} ms.`;
}
