// `bun run bench context [--calls N] [--webhook-ms D]`: what call_context adds before an inbound call's
// greeting, and what call_analysis adds to a call's conclusion. Interleaved in one run:
//  - before the greeting: prepareInboundCall (the whole step the greeting waits on) without a
//    call_context extension, with one whose server answers after D ms, and the same POST with plain
//    node:http (the webhook's own time); the target is "webhook's own time + < 5 ms";
//  - the conclusion: the post-call request (summarizeCall) without and with a call_analysis plan,
//    against a local chat completions server answering at once (only our side is measured).
import http from "node:http";
import { parseArgs } from "node:util";
import { prepareInboundCall } from "../../src/calls/call-context";
import { loadConfig } from "../../src/config";
import { createOutboundGuard } from "../../src/net/outbound-guard";
import { analysisPlanOf } from "../../src/voice/call-analysis";
import { summarizeCall } from "../../src/voice/summarize";
import { startFakeChatServer } from "../../test/fakes/chat-completions-server";
import { percentile } from "../lib/harness";

const { values } = parseArgs({
  options: { calls: { type: "string", default: "300" }, "webhook-ms": { type: "string", default: "20" } },
});
const N = Number(values.calls);
const webhookMs = Number(values["webhook-ms"]);
const say = (msg: string) => console.error(`[bench/context] ${msg}`);

const answer = JSON.stringify({ variables: { customer_name: "Ada", tier: "gold" } });
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () =>
    setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(answer), webhookMs),
  );
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/context`;
const guard = createOutboundGuard({ allowCidrs: ["127.0.0.0/8"] });
const transport = { type: "websocket" as const };
const withContext = { extensions: [{ type: "call_context", parameters: { url, timeoutMs: 2000 } }] };
const without = { extensions: [] };

function plainPost(): Promise<void> {
  const body = JSON.stringify({ type: "call_context", callId: "bench", transport });
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", agent: false, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve());
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const chat = await startFakeChatServer();
const config = loadConfig({ OPENAI_BASE_URL: chat.baseUrl });
const schema = JSON.stringify({ type: "object", properties: { intent: { type: "string" } }, required: ["intent"] });
const plan = analysisPlanOf([{ type: "call_analysis", parameters: { schema } }])!;
const transcript = [
  { role: "USER", text: "I want to cancel order 42." },
  { role: "ASSISTANT", text: "Order 42 is cancelled." },
];
const withAnalysis = {
  ...chat.summary,
  analysis: { data: { intent: "cancel" }, success: true, successReason: "Done." },
};

const variants: [string, () => Promise<unknown>][] = [
  ["greeting: no call_context", () => prepareInboundCall(without, transport, { a: "1" }, guard)],
  [`greeting: the webhook's own time (plain POST, ${webhookMs} ms server)`, plainPost],
  ["greeting: with call_context", () => prepareInboundCall(withContext, transport, { a: "1" }, guard)],
  ["conclusion: summary only", () => summarizeCall({ transcript, config })],
  [
    "conclusion: summary + analysis",
    () => {
      chat.answers.push(withAnalysis);
      return summarizeCall({ transcript, config, analysis: plan });
    },
  ],
];
const samples = new Map(variants.map(([name]) => [name, [] as number[]]));
say(`${N} rounds of ${variants.length} variants, interleaved (2 cores shared with other work: expect noise)`);
for (let i = 0; i < N; i++) {
  if (i > 0 && i % 100 === 0) say(`${i}/${N}`);
  for (const [name, run] of variants) {
    const t0 = performance.now();
    await run();
    samples.get(name)!.push(performance.now() - t0);
  }
}
server.close();
await chat.close();

const ms = (x: number) => `${x.toFixed(2)} ms`;
const rows = [["variant", "p50", "p90", "p99"]];
for (const [name, xs] of samples)
  rows.push([name, ms(percentile(xs, 50)), ms(percentile(xs, 90)), ms(percentile(xs, 99))]);
const p50 = (name: string) => percentile(samples.get(name)!, 50);
const own = p50(variants[1]![0]);
rows.push(["call_context's added delay beyond the webhook's own time (p50)", ms(p50(variants[2]![0]) - own), "", ""]);
rows.push([
  "analysis' added conclusion time (p50, one request either way)",
  ms(p50(variants[4]![0]) - p50(variants[3]![0])),
  "",
  "",
]);
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c]!)).join("  "));
