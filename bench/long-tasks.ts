// bench/long-tasks (by hand): what the event loop did in its long tasks, from a CPU profile in the
// Chrome format (BENCH_PROFILE=bridge/main BENCH_PROFILE_FORMAT=cpuprofile on a bench). Samples less
// than 2.5 ms apart are one task; tasks of MIN ms or more are summed by function, inclusive.
// The profiler records no idle samples, so gaps end tasks. Markdown summaries put native time on
// whatever JavaScript frame is on top; grouping by task and stack shows who started the work.
// --from S leaves out the tasks that begin in the profile's first S seconds (a process's start-up).
//   bun bench/long-tasks.ts <file.cpuprofile> [--min 10] [--top 40] [--from 0]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

type Node = { id: number; callFrame: { functionName: string; url: string }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    min: { type: "string", default: "10" },
    top: { type: "string", default: "40" },
    from: { type: "string", default: "0" },
  },
});
if (!positionals[0])
  throw new Error("usage: bun bench/long-tasks.ts <file.cpuprofile> [--min 10] [--top 40] [--from 0]");
const profile: Profile = JSON.parse(readFileSync(positionals[0], "utf8"));

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n: Node) =>
  `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/^.*?(node_modules\/|src\/|bench\/)/, "$1")}`;
/** Every distinct function on the stack of a sample, leaf first. */
function stack(id: number): string[] {
  const out = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) out.add(name(nodes.get(at)!));
  return [...out];
}

const times: number[] = [];
let t = 0;
for (const d of profile.timeDeltas) {
  t += d;
  times.push(t / 1000); // µs -> ms
}
const idle = (id: number) => ["(idle)", "(program)", "(root)"].includes(nodes.get(id)!.callFrame.functionName);

// consecutive samples less than 2.5 ms apart form one task
const tasks: number[][] = [];
let current: number[] = [];
profile.samples.forEach((id, k) => {
  const gap = current.length > 0 && times[k]! - times[current.at(-1)!]! > 2.5;
  if (idle(id) || gap) {
    if (current.length) tasks.push(current);
    current = idle(id) ? [] : [k];
  } else current.push(k);
});
if (current.length) tasks.push(current);

const min = Number(values.min);
const from = times[0]! + Number(values.from) * 1000;
const duration = (task: number[]) => times[task.at(-1)!]! - times[task[0]!]!;
const long = tasks.filter((task) => times[task[0]!]! >= from && duration(task) >= min);
const inclusive = new Map<string, number>();
let samples = 0;
for (const task of long)
  for (const k of task) {
    samples++;
    for (const f of stack(profile.samples[k]!)) inclusive.set(f, (inclusive.get(f) ?? 0) + 1);
  }
const spanMs = times.at(-1)! - times[0]!;
const longMs = long.reduce((sum, task) => sum + duration(task), 0);
const longest = Math.max(0, ...long.map(duration));
console.log(
  `${profile.samples.length} samples over ${(spanMs / 1000).toFixed(1)} s; ${long.length} tasks of ${min} ms or more${values.from === "0" ? "" : ` from ${values.from} s on`}, ${longMs.toFixed(0)} ms in all, the longest ${longest.toFixed(1)} ms, ${samples} samples`,
);
for (const [f, n] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
  console.log(`${((n * 100) / samples).toFixed(1).padStart(5)} %  ${f}`);
