// Runs one sendHook in a child process (Node, the hook worker's runtime, or Bun) with a scripted
// resolver, and prints the outcome and the number of lookups as JSON: the guard must hold in both.
// argv[2]: {"url": string, "allowCidrs": string[], "answers": string[][], "sends"?: number} (answers[i]: the
// i-th lookup; sends: how many exchanges one after the other through the same guard, 1 by default)
import { sendHook } from "../../src/events/send-hook";
import { createOutboundGuard } from "../../src/net/outbound-guard";

const {
  url,
  allowCidrs,
  answers,
  sends = 1,
} = JSON.parse(process.argv[2] ?? "{}") as {
  url: string;
  allowCidrs: string[];
  answers: string[][];
  sends?: number;
};
let lookups = 0;
const resolve = async () => answers[Math.min(lookups++, answers.length - 1)] ?? [];
const guard = createOutboundGuard({ allowCidrs, resolve });
const results = [];
for (let i = 0; i < sends; i++)
  results.push(await sendHook({ url, method: "POST", headers: {}, body: Buffer.from("{}"), timeoutMs: 3_000, guard }));
const runtime = typeof Bun === "undefined" ? "node" : "bun";
// then exit: kept-alive connections (Node) would hold the process open for their idle time
process.stdout.write(JSON.stringify({ ...results.at(-1), results, lookups, runtime }), () => process.exit(0));
