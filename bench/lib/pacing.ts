// The bridge's own share of media jitter: its vas_media_pacing_delay_seconds histogram (per thread: the
// main event loop, which paces agent frames and, without the media thread, RTP; the media thread, which
// paces RTP) and vas_media_late_frames_total, read before and after a window; and where the read model's
// reads came from meanwhile (vas_read_model_reads_total: Postgres once the model stopped trusting itself).
import { scrape } from "../../test/metrics/scrape";

type Buckets = Map<number, number>; // bucket upper bound (ms) -> cumulative runs
export type PacingSnapshot = { threads: Map<string, Buckets>; lateFrames: number; reads: Map<string, number> };

export async function pacingSnapshot(metricsUrl: string): Promise<PacingSnapshot> {
  const threads = new Map<string, Buckets>();
  let lateFrames = 0;
  const reads = new Map<string, number>();
  for (const s of await scrape(metricsUrl)) {
    if (s.name === "vas_media_late_frames_total") lateFrames += s.value;
    if (s.name === "vas_read_model_reads_total") reads.set(s.labels.source ?? "", s.value);
    if (s.name !== "vas_media_pacing_delay_seconds_bucket") continue;
    const thread = s.labels.thread ?? "main";
    if (!threads.has(thread)) threads.set(thread, new Map());
    threads.get(thread)!.set(s.labels.le === "+Inf" ? Infinity : Number(s.labels.le) * 1000, s.value);
  }
  return { threads, lateFrames, reads };
}

/** "main pacer runs N, delay p99 <= X ms, max <= Y ms, K over 10 ms; media pacer …; late agent frames L". */
export function describePacing(before: PacingSnapshot, after: PacingSnapshot): string {
  const parts = [...after.threads].map(
    ([thread, buckets]) => `${thread} pacer ${describeRuns(before.threads.get(thread) ?? new Map(), buckets)}`,
  );
  return [...parts, `late agent frames ${after.lateFrames - before.lateFrames}`, describeReads(before, after)].join(
    "; ",
  );
}

/** "read model reads M from memory, P from Postgres" between two snapshots. */
export function describeReads(before: PacingSnapshot, after: PacingSnapshot): string {
  const reads = (source: string) => (after.reads.get(source) ?? 0) - (before.reads.get(source) ?? 0);
  return `read model reads ${reads("memory")} from memory, ${reads("database")} from Postgres`;
}

function describeRuns(before: Buckets, after: Buckets): string {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const delta = bounds.map((le) => [le, after.get(le)! - (before.get(le) ?? 0)] as const);
  const runs = delta.at(-1)?.[1] ?? 0;
  if (runs === 0) return "did not run";
  const bound = (share: number) => delta.find(([, cum]) => cum >= share * runs)![0];
  const upTo10 = delta.find(([le]) => le >= 10)?.[1] ?? runs;
  return `runs ${runs}, delay p99 <= ${bound(0.99)} ms, max <= ${bound(1)} ms, ${runs - upTo10} over 10 ms`;
}
