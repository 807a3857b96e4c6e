// The bridge's own share of media jitter: its vas_media_pacing_delay_seconds histogram, read before
// and after a window, gives how late the pacer of agent frames and RTP ran in that window.
import { scrape } from "../../test/metrics/scrape";

export type PacingSnapshot = Map<number, number>; // bucket upper bound (ms) -> cumulative runs

export async function pacingSnapshot(metricsUrl: string): Promise<PacingSnapshot> {
  const samples = await scrape(metricsUrl);
  const buckets = new Map<number, number>();
  for (const s of samples)
    if (s.name === "vas_media_pacing_delay_seconds_bucket")
      buckets.set(s.labels.le === "+Inf" ? Infinity : Number(s.labels.le) * 1000, s.value);
  return buckets;
}

/** "pacer runs N, delay p99 <= X ms, max <= Y ms, K over 10 ms" for the runs between two snapshots. */
export function describePacing(before: PacingSnapshot, after: PacingSnapshot): string {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const delta = bounds.map((le) => [le, after.get(le)! - (before.get(le) ?? 0)] as const);
  const runs = delta.at(-1)?.[1] ?? 0;
  if (runs === 0) return "pacer did not run";
  const bound = (share: number) => delta.find(([, cum]) => cum >= share * runs)![0];
  const upTo10 = delta.find(([le]) => le >= 10)?.[1] ?? runs;
  return `pacer runs ${runs}, delay p99 <= ${bound(0.99)} ms, max <= ${bound(1)} ms, ${runs - upTo10} over 10 ms`;
}
