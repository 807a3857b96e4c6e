// Reads an async iterable as fast as it produces from the moment this is called, keeping what is not
// consumed yet: a preemptive LLM answer streams in (its stall timer fed) while nothing is heard of it.
export function readAhead<T>(source: AsyncIterable<T>): AsyncIterable<T> {
  const buffered: T[] = [];
  let done = false;
  let failure: { error: unknown } | null = null;
  let wake = () => {};
  void (async () => {
    try {
      for await (const item of source) {
        buffered.push(item);
        wake();
      }
    } catch (error) {
      failure = { error };
    } finally {
      done = true;
      wake();
    }
  })();
  return {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (buffered.length > 0) yield buffered.shift()!;
        else if (failure) throw failure.error;
        else if (done) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
