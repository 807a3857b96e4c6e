// Polling until a condition holds, for tests that wait on other processes.
/** Polls `check` every `intervalMs` until it returns a value (not undefined, null or false). */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 15_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(intervalMs);
  }
}

/** `eventually` for probes of this process's own state: polled every 10 ms, 5 s by default. */
export const until = <T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 5_000) =>
  eventually(probe, what, timeoutMs, 10);
