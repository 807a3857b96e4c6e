// Runs a job over a list with at most `limit` running at once. A lane stops at its first error (the rest
// of the list is left to the other lanes); the first error is thrown once every lane has stopped.
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  job: (item: T) => Promise<void>,
  stopped: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let item = items[next++]; item !== undefined && !stopped(); item = items[next++]) await job(item);
  };
  const lanes = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, lane));
  const failed = lanes.find((l): l is PromiseRejectedResult => l.status === "rejected");
  if (failed) throw failed.reason;
}
