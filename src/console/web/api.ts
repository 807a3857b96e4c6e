// The console talks to the public API only, with the token the user signed in with. The token and the
// organization stay in this tab's sessionStorage (gone when the tab closes; never in localStorage).
import type { paths } from "../../../clients/typescript/schema";

export type Session = { token: string; vendorId: string; organizationId: string };

const key = "vas-console";

export function session(): Session | null {
  const raw = sessionStorage.getItem(key);
  return raw ? (JSON.parse(raw) as Session) : null;
}
export const signIn = (s: Session) => sessionStorage.setItem(key, JSON.stringify(s));
export const signOut = () => sessionStorage.removeItem(key);

export type FieldError = { field: string; message: string };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** the fields a 400 names (`criteria[0].pattern`), for a form to mark */
    readonly errors: FieldError[] = [],
  ) {
    super(message);
  }
}

/** The organization's base path (P in the README). */
export function orgPath(s = session()!) {
  return `/api/v1/vendors/${s.vendorId}/organizations/${s.organizationId}`;
}

/** A body sent as it is under its own content type (a document upload), not as JSON. */
export class RawBody {
  constructor(
    readonly body: Blob | string,
    readonly type: string,
  ) {}
}

async function request(method: string, path: string, body?: unknown, token = session()?.token): Promise<Response> {
  const raw = body instanceof RawBody;
  const res = await fetch(path, {
    method,
    headers: {
      ...(token && { authorization: `Bearer ${token}` }),
      ...(body !== undefined && { "content-type": raw ? body.type : "application/json" }),
    },
    body: body === undefined ? undefined : raw ? body.body : JSON.stringify(body),
  });
  if (!res.ok) {
    const text = await res.text();
    let message = text;
    let errors: FieldError[] = [];
    try {
      const parsed = JSON.parse(text);
      errors = parsed.errors ?? [];
      message = [parsed.message, ...errors.map((e) => `${e.field}: ${e.message}`)].join("\n");
    } catch {}
    throw new ApiError(res.status, `${res.status}: ${message}`, errors);
  }
  return res;
}

// ---- typed calls: paths, bodies and answers from the typed client's types (clients/typescript) -------

type Prefix = "/api/v1/vendors/{vendorId}/organizations/{organizationId}";
/** The organization's operations by their path under P (`/assistants/{assistantId}`). */
type OrgPaths = { [K in keyof paths as K extends `${Prefix}${infer Rest}` ? Rest : never]: paths[K] };
export type OrgPath = keyof OrgPaths;
type Method = "get" | "post" | "put" | "delete";
type Operation<P extends OrgPath, M extends Method> = OrgPaths[P][M];
type JsonContent<T> = T extends { content: { "application/json": infer B } } ? B : never;
type Success<R> = R extends { 200: infer A }
  ? A
  : R extends { 201: infer A }
    ? A
    : R extends { 202: infer A }
      ? A
      : never;
/** The JSON body an operation takes. */
export type BodyOf<P extends OrgPath, M extends Method> =
  Operation<P, M> extends { requestBody?: infer B } ? JsonContent<NonNullable<B>> : never;
/** The successful answer's envelope of an operation, and its `data`. */
type EnvelopeIn<O> = O extends { responses: infer R } ? JsonContent<Success<R>> : never;
type DataIn<O> = EnvelopeIn<O> extends { data: infer D } ? D : never;
export type EnvelopeOf<P extends OrgPath, M extends Method> = EnvelopeIn<Operation<P, M>>;
export type DataOf<P extends OrgPath, M extends Method> = DataIn<Operation<P, M>>;
export type AgentTask = DataOf<"/agent-tasks/{agentTaskId}", "get">;
export type Message = NonNullable<AgentTask["messages"]>[number];
export type Assistant = DataOf<"/assistants/{assistantId}", "get">;
/** The parameters a path names in braces. */
type ParamsIn<S extends string> = S extends `${string}{${infer Name}}${infer Rest}`
  ? { [K in Name]: string } & ParamsIn<Rest>
  : unknown;

const fill = (path: string, params: unknown) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent((params as Record<string, string>)[name]!));
type Options<P extends OrgPath, M extends Method> = {
  body?: BodyOf<P, M>;
  /** a body sent as it is (an upload, CSV), for operations that take one besides JSON */
  raw?: RawBody;
  /** the query string, without `?` */
  query?: string;
};

/** The whole answer to a call under the organization's path. */
async function send<P extends OrgPath, M extends Method>(
  method: M,
  path: P,
  params: ParamsIn<P>,
  options: Options<P, M>,
) {
  const query = options.query ? `?${options.query}` : "";
  return request(method.toUpperCase(), orgPath() + fill(path, params) + query, options.raw ?? options.body);
}

/**
 * A call under the organization's path, typed by the API's OpenAPI document: `path` is one of its paths
 * (`/assistants/{assistantId}`), `params` fills the braces, `body` and the answer's `data` have the
 * operation's types, so that a change of the API's shapes fails the console's type check.
 */
export async function call<P extends OrgPath, M extends Method>(
  method: M,
  path: P,
  params: ParamsIn<P>,
  options: Options<P, M> = {},
): Promise<DataOf<P, M>> {
  return ((await (await send(method, path, params, options)).json()) as { data: DataOf<P, M> }).data;
}

/** A whole page of a list: its rows and where it is in the list (`totalElements`, `totalPages`). */
export async function callPaged<P extends OrgPath>(path: P, params: ParamsIn<P>, query: string) {
  return (await (await send("get", path, params, { query })).json()) as EnvelopeOf<P, "get">;
}

/** `data` of a GET at an absolute API path, as `token` (before signing in: which organizations it reaches). */
export async function getAs<P extends keyof paths & string>(token: string, path: P, params: ParamsIn<P>, query = "") {
  const res = await request("GET", fill(path, params) + (query ? `?${query}` : ""), undefined, token);
  return ((await res.json()) as { data: DataIn<paths[P]["get"]> }).data;
}

/** A binary sub-resource (a recording) as a blob: media elements cannot send the token themselves. */
export async function blob<P extends OrgPath>(path: P, params: ParamsIn<P>): Promise<Blob> {
  return (await send("get", path, params, {})).blob();
}

export type ConsoleConfig = { bridgeUrl: string };
export const consoleConfig = (): Promise<ConsoleConfig> => fetch("/console/config.json").then((r) => r.json());
