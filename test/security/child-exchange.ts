// Runs one sendHook in a child process (Node, the hook worker's runtime, or Bun) with a scripted
// resolver, and prints the outcome and the number of lookups as JSON: the guard must hold in both.
// argv[2]: {"url": string, "allowCidrs": string[], "answers": string[][]} (answers[i]: the i-th lookup)
import { sendHook } from "../../src/events/send-hook";
import { createOutboundGuard } from "../../src/net/outbound-guard";

const { url, allowCidrs, answers } = JSON.parse(process.argv[2] ?? "{}") as {
  url: string;
  allowCidrs: string[];
  answers: string[][];
};
let lookups = 0;
const resolve = async () => answers[Math.min(lookups++, answers.length - 1)] ?? [];
const guard = createOutboundGuard({ allowCidrs, resolve });
const res = await sendHook({ url, method: "POST", headers: {}, body: Buffer.from("{}"), timeoutMs: 3_000, guard });
process.stdout.write(JSON.stringify({ ...res, lookups, runtime: typeof Bun === "undefined" ? "node" : "bun" }));
