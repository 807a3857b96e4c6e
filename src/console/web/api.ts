// The console talks to the public API only, with the token the user signed in with. The token and the
// organization stay in this tab's sessionStorage (gone when the tab closes; never in localStorage).
export type Session = { token: string; vendorId: string; organizationId: string };

const key = "vas-console";

export function session(): Session | null {
  const raw = sessionStorage.getItem(key);
  return raw ? (JSON.parse(raw) as Session) : null;
}
export const signIn = (s: Session) => sessionStorage.setItem(key, JSON.stringify(s));
export const signOut = () => sessionStorage.removeItem(key);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The organization's base path (P in the README). */
export function orgPath(s = session()!) {
  return `/api/v1/vendors/${s.vendorId}/organizations/${s.organizationId}`;
}

/** A body sent as written, e.g. contacts as text/csv (anything else goes as JSON). */
export class TextBody {
  constructor(
    readonly text: string,
    readonly type: string,
  ) {}
}

async function request(method: string, path: string, body?: unknown, token = session()?.token): Promise<Response> {
  const text = body instanceof TextBody;
  const res = await fetch(path, {
    method,
    headers: {
      ...(token && { authorization: `Bearer ${token}` }),
      ...(body !== undefined && { "content-type": text ? body.type : "application/json" }),
    },
    body: body === undefined ? undefined : text ? body.text : JSON.stringify(body),
  });
  if (!res.ok) {
    const text = await res.text();
    let message = text;
    try {
      const parsed = JSON.parse(text);
      message = [
        parsed.message,
        ...(parsed.errors ?? []).map((e: { field: string; message: string }) => `${e.field}: ${e.message}`),
      ].join("\n");
    } catch {}
    throw new ApiError(res.status, `${res.status}: ${message}`);
  }
  return res;
}

// biome-ignore lint/suspicious/noExplicitAny: API JSON as the page reads it (its shapes: the OpenAPI document)
export type Json = any;

/** JSON `data` of an envelope under the organization's path. */
export async function api<T = Json>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await request(method, orgPath() + path, body);
  return (await res.json()).data as T;
}

export type Page<T = Json> = { data: T[]; page: number; size: number; totalElements: number; totalPages: number };

/** A paged envelope under the organization's path, with its page facts. */
export async function apiPage<T = Json>(path: string): Promise<Page<T>> {
  return (await request("GET", orgPath() + path)).json() as Promise<Page<T>>;
}

/** JSON `data` of an envelope at an absolute API path, as `token` (before signing in). */
export async function apiAs<T = Json>(token: string, path: string): Promise<T> {
  const res = await request("GET", path, undefined, token);
  return (await res.json()).data as T;
}

/** A binary sub-resource (a recording) as a blob: media elements cannot send the token themselves. */
export async function blob(path: string): Promise<Blob> {
  return (await request("GET", orgPath() + path)).blob();
}

export type ConsoleConfig = { bridgeUrl: string };
export const consoleConfig = (): Promise<ConsoleConfig> => fetch("/console/config.json").then((r) => r.json());
