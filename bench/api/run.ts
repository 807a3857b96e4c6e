// bench/api: our read path against a bare postgres.js baseline, measured side by side with wrk, and the
// cost of the HTTP conventions (issue 30) on our server alone.
//   bun bench/api/run.ts [--seconds 10] [--connections 32]
// Seeds 10,000 assistants (one tool and one hook each) into a scratch database, then loads
// GET P/assistants/{id} and GET P/assistants?size=20 on both servers, one after the other; then on ours:
// GET by id answered 304 through If-None-Match, POST P/assistants plain, with a new Idempotency-Key per
// request (claim + sealed response kept), and with one repeated key (every answer a replay).
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { dropDatabase, migrateDatabase } from "../../src/db/migrate";
import { freePort } from "../../test/helpers/temporal";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "10" }, connections: { type: "string", default: "32" } },
});
const server = process.env.TEST_DATABASE_SERVER ?? "postgres://postgres@127.0.0.1:5432";
// one database per run: benches of several worktrees may run on one machine
const databaseUrl = `${server}/vas_bench_api_${process.pid}`;
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

async function startServer(args: string[], port: number) {
  const proc = spawn("bun", args, { env: { ...env, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit"] });
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
/** MODE: one (GET by id), etag (the same with If-None-Match: its ETag), list, post, post-key, replay. */
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
type Mode = "one" | "etag" | "list" | "post" | "post-key" | "replay";
function wrk(url: string, mode: Mode, prefix: string): Result {
  const run = Bun.spawnSync(
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
    },
  );
  const out = run.stdout.toString();
  const ms = (label: string) => {
    const m = new RegExp(`${label}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) throw new Error(`wrk output without ${label}%:\n${out}${run.stderr}`);
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

// the conventions' cost, on our server only (the baseline has no such thing)
const oursOnly = [
  { name: "GET P/assistants/{id}, If-None-Match: its ETag (304)", mode: "etag" as const },
  { name: "POST P/assistants", mode: "post" as const },
  { name: "POST P/assistants, a new Idempotency-Key each", mode: "post-key" as const },
  { name: "POST P/assistants, one repeated key (replays)", mode: "replay" as const },
];

const [oursPort, basePort] = [await freePort(), await freePort()];
const [oursUrl, baseUrl] = [`http://127.0.0.1:${oursPort}`, `http://127.0.0.1:${basePort}`];
// a server that does not start leaves no scratch database behind (nor the other server)
const giveUp = async (error: unknown, running?: { kill(): unknown }) => {
  running?.kill();
  await dropDatabase(databaseUrl);
  throw error;
};
const ours = await startServer(["src/index.ts"], oursPort).catch((error) => giveUp(error));
const baseline = await startServer(["bench/api/baseline-server.ts"], basePort).catch((error) => giveUp(error, ours));
const etags = await Promise.all(
  ids.map(async (id) => {
    const res = await fetch(`${oursUrl}${P}/${id}`, { headers: { authorization: `Bearer ${token}` } });
    return res.headers.get("etag") ?? "";
  }),
);
await writeLua(etags);
const rows: string[] = [];
const own: Record<string, Result> = {};
try {
  for (const c of cases) {
    say(`${c.name}: warming up`);
    wrk(oursUrl, c.mode, c.ours);
    say(`${c.name}: ours, ${values.seconds}s with ${values.connections} connections`);
    const a = wrk(oursUrl, c.mode, c.ours);
    say(`${c.name}: baseline`);
    wrk(baseUrl, c.mode, c.base);
    const b = wrk(baseUrl, c.mode, c.base);
    if (a.errors || b.errors) say(`non-2xx answers: ours ${a.errors}, baseline ${b.errors}`);
    rows.push(
      `| ${c.name} | ${a.rps.toFixed(0)} | ${a.p50.toFixed(2)} | ${a.p99.toFixed(2)} | ${b.rps.toFixed(0)} | ${b.p50.toFixed(2)} | ${b.p99.toFixed(2)} | ${((a.rps / b.rps) * 100).toFixed(0)}% |`,
    );
  }
  for (const c of oursOnly) {
    say(`${c.name}: warming up`);
    wrk(oursUrl, c.mode, P);
    say(`${c.name}: ours, ${values.seconds}s with ${values.connections} connections`);
    const a = wrk(oursUrl, c.mode, P);
    if (a.errors) say(`non-2xx/3xx answers: ${a.errors}`);
    own[c.mode] = a;
    rows.push(`| ${c.name} | ${a.rps.toFixed(0)} | ${a.p50.toFixed(2)} | ${a.p99.toFixed(2)} | – | – | – | – |`);
  }
} finally {
  ours.kill();
  baseline.kill();
  await dropDatabase(databaseUrl);
}
console.log(
  `bench/api: wrk, ${values.connections} connections, ${values.seconds} s per case, one after the other on this machine.`,
);
console.log(
  "ours: bun src/index.ts (auth, tenancy, validation, envelope, logging); baseline: bench/api/baseline-server.ts (Bun.serve + postgres.js, the same query, nothing else).\n",
);
console.log(
  "| case | ours req/s | ours p50 ms | ours p99 ms | baseline req/s | baseline p50 ms | baseline p99 ms | ours/baseline |",
);
console.log("|---|---|---|---|---|---|---|---|");
for (const row of rows) console.log(row);
const added = (mode: Mode) => (own[mode]!.p50 - own.post!.p50).toFixed(2);
console.log(
  `\nIdempotency-Key adds ${added("post-key")} ms at p50 to a POST (a replay: ${added("replay")} ms; target < 1 ms).`,
);
