// bench/transfer (by hand, not CI): what a transfer to a human costs the bridge.
//   bun run bench transfer [--handovers 20] [--calls 100] [--seconds 20]
// 1. the relay (relay.ts): media thread CPU per relayed call against a plain call, the delay
//    variation a relayed path adds against a direct one, frames lost, `calls` calls at once;
// 2. the hand-over (handover.ts): tool call → REFER at the caller and → the second leg's INVITE at the
//    destination, real SIP peers through Kamailio on loopback, `handovers` calls each.
// The load average is printed before and after each part: on a shared machine the figures carry it.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { migrateDatabase } from "../../src/db/migrate";
import { createBench } from "../lib/harness";
import { handoverRow, measureHandover } from "./handover";
import { measureRelay } from "./relay";

const { values } = parseArgs({
  options: {
    handovers: { type: "string", default: "20" },
    calls: { type: "string", default: "100" },
    seconds: { type: "string", default: "20" },
  },
});
const { say, databaseUrl, finish } = createBench("transfer");
const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`;

say(load());
const relay = await measureRelay(Number(values.calls), Number(values.seconds), say);
const afterRelay = load();
say(afterRelay);
await migrateDatabase(databaseUrl);
const handovers = await measureHandover(Number(values.handovers), say);
const afterHandover = load();

console.log(`relay, ${values.calls} calls for ${values.seconds} s (peers in their own process); ${afterRelay}`);
console.table(relay);
console.log(`hand-over, ${values.handovers} calls per method, one after another; ${afterHandover}`);
console.table(handovers.map(handoverRow));
await finish();
