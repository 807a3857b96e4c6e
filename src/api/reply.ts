// Success envelopes. traceId is added by the app for every response, errors included.
import type { Page } from "../services/paging";

const now = () => new Date().toISOString();

export const ok = <T>(data: T, message?: string) => ({ success: true as const, message, data, timestamp: now() });
export const done = (message?: string) => ({ success: true as const, message, data: null, timestamp: now() });
export const paged = <T>(page: Page<T>) => ({ success: true as const, timestamp: now(), ...page });
