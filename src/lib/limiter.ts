// Runs jobs with at most `limit` at once; the others wait their turn in order.
export function createLimiter(limit: number) {
  let running = 0;
  const queue: (() => void)[] = [];
  return async function run<T>(job: () => Promise<T>): Promise<T> {
    if (running >= limit) await new Promise<void>((resolve) => queue.push(resolve));
    running++;
    try {
      return await job();
    } finally {
      running--;
      queue.shift()?.();
    }
  };
}
