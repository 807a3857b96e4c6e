// The spec's envelope as values, for every process that answers HTTP (the API and the bridge). traceId is
// added by the API for every response, errors included.
import type { FieldError } from "../errors";

/** One page of a list, as list endpoints return it. */
export type Page<T> = { data: T[]; page: number; size: number; totalElements: number; totalPages: number };

const now = () => new Date().toISOString();

export const ok = <T>(data: T, message?: string) => ({ success: true as const, message, data, timestamp: now() });
export const done = (message?: string) => ({ success: true as const, message, data: null, timestamp: now() });
export const paged = <T>(page: Page<T>) => ({ success: true as const, timestamp: now(), ...page });
export const failure = (message: string, errors?: FieldError[]) => ({
  success: false as const,
  message,
  data: null,
  errors,
  timestamp: now(),
});
