// `bun run bench outbound [--requests N]`: what the outbound guard costs per request. The same POST to
// a local receiver through guardedExchange (resolve once, check, connect to the checked address, one
// connection per request) and through plain node:http with agent: false (the same connection policy,
// no guard), interleaved in one run. A name (via the system resolver: localhost -> /etc/hosts) and an
// IP literal (no lookup at all) show the resolver's share. Bun (the bridge's tool webhooks) by default;
// `node --import tsx bench/outbound/run.ts` for Node (the hook worker).
import http from "node:http";
import { parseArgs } from "node:util";
import { guardedExchange } from "../../src/net/guarded-request";
import { createOutboundGuard } from "../../src/net/outbound-guard";
import { percentile } from "../lib/harness";

const { values } = parseArgs({ options: { requests: { type: "string", default: "2000" } } });
const N = Number(values.requests);
const say = (msg: string) => console.error(`[bench/outbound] ${msg}`);

const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => res.end("ok"));
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as { port: number }).port;
const body = Buffer.from(JSON.stringify({ type: "call_concluded", callId: "bench" }));
const headers = { "content-type": "application/json", "content-length": String(body.length) };
const guard = createOutboundGuard({ allowCidrs: ["127.0.0.0/8", "::1/128"] });

function plain(host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname: host, port, path: "/", method: "POST", agent: false, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve());
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function guarded(host: string) {
  const res = await guardedExchange(guard, {
    url: `http://${host}:${port}/`,
    method: "POST",
    headers,
    body,
    timeoutMs: 5_000,
    maxResponseBytes: 1024,
  });
  if (res.statusCode !== 200) throw new Error(res.error ?? `status ${res.statusCode}`);
}

const variants: [string, () => Promise<void>][] = [
  ["plain node:http, 127.0.0.1", () => plain("127.0.0.1")],
  ["guarded, 127.0.0.1", () => guarded("127.0.0.1")],
  ["plain node:http, localhost", () => plain("localhost")],
  ["guarded, localhost", () => guarded("localhost")],
];
const samples = new Map(variants.map(([name]) => [name, [] as number[]]));
say(`${N} requests per variant, interleaved (2 cores shared with other work: expect noise)`);
for (let i = 0; i < N; i++)
  for (const [name, run] of variants) {
    const t0 = performance.now();
    await run();
    samples.get(name)!.push(performance.now() - t0);
  }
server.close();

const ms = (x: number) => `${x.toFixed(3)} ms`;
const rows = [["variant", "p50", "p90", "p99"]];
for (const [name, xs] of samples)
  rows.push([name, ms(percentile(xs, 50)), ms(percentile(xs, 90)), ms(percentile(xs, 99))]);
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
console.log(
  "bench/outbound: guardedExchange against the baseline plain node:http (agent: false), interleaved, per request:",
);
for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c]!)).join("  "));
