// bench/transfer (by hand, not CI): what a transfer to a human costs the bridge.
//   bun run bench transfer [--handovers 20] [--calls 100] [--seconds 20] [--sut-cpus 0 --load-cpus 1]
// 1. the relay (relay.ts): media thread CPU per relayed call against a plain call and against
//    rtpengine relaying the same calls, the delay variation a relayed path adds against a direct one,
//    frames lost, `calls` calls at once; the relays on the SUT cores, the peers on the load cores;
// 2. the hand-over (handover.ts): tool call → REFER at the caller and → the second leg's INVITE at the
//    destination, real SIP peers through Kamailio on loopback, `handovers` calls each (one call at a
//    time, the bridge in this process: not split, all on the load cores).
// The load average is printed before and after each part: on a shared machine the figures carry it.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { migrateDatabase } from "../../src/db/migrate";
import { createBench } from "../lib/harness";
import { handoverRow, measureHandover } from "./handover";
import { measureRelay } from "./relay";
import { pinningFrom, pinningOptions } from "../lib/pinning";

const { values } = parseArgs({
  options: {
    handovers: { type: "string", default: "20" },
    calls: { type: "string", default: "100" },
    seconds: { type: "string", default: "20" },
    ...pinningOptions,
  },
});
const pinning = pinningFrom(values);
const { say, databaseUrl, watch, finish } = createBench("transfer", pinning);
const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`;

say(load());
const relay = await measureRelay(Number(values.calls), Number(values.seconds), say, pinning, watch);
const afterRelay = load();
say(afterRelay);
await migrateDatabase(databaseUrl);
const handovers = await measureHandover(Number(values.handovers), say);
const afterHandover = load();

console.log(
  `relay, ${values.calls} calls for ${values.seconds} s (peers in their own process; relays on SUT cores ${pinning.sut}, peers on ${pinning.load}; a shared machine); ${afterRelay}`,
);
console.table(relay);
console.log(`hand-over, ${values.handovers} calls per method, one after another; ${afterHandover}`);
console.table(handovers.map(handoverRow));
await finish();
