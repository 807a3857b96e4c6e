// Token buckets per key: `perSecond` refill, `burst` capacity. take() says how long the key must wait
// (0: go now, one unit taken). Memory is bounded: beyond maxKeys, full (idle) buckets go first.
export function createRateLimiter(perSecond: number, burst: number, maxKeys = 100_000) {
  const buckets = new Map<string, { level: number; at: number }>();
  function prune(now: number) {
    for (const [key, b] of buckets) if (b.level + ((now - b.at) / 1000) * perSecond >= burst) buckets.delete(key);
    for (const key of buckets.keys()) if (buckets.size > maxKeys) buckets.delete(key);
  }
  return {
    take(key: string, now = performance.now()): number {
      const bucket = buckets.get(key) ?? { level: burst, at: now };
      bucket.level = Math.min(burst, bucket.level + ((now - bucket.at) / 1000) * perSecond);
      bucket.at = now;
      buckets.set(key, bucket);
      if (buckets.size > maxKeys) prune(now);
      if (bucket.level >= 1) {
        bucket.level -= 1;
        return 0;
      }
      return ((1 - bucket.level) / perSecond) * 1000;
    },
  };
}
