// A typed client for the Voice AI Assistant Management Service: openapi-fetch over the types generated
// from the service's OpenAPI document (schema.d.ts). Paths, parameters, bodies and answers are checked
// by the compiler; every call returns { data, error, response }.
import createClient from "openapi-fetch";
import type { paths } from "./schema";

export type { components, paths } from "./schema";

export type VasClientOptions = {
  /** where the service listens, e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  /** an API token (vendor or organization) or the admin token */
  token: string;
  /** a fetch to use instead of the global one (tests, proxies) */
  fetch?: typeof fetch;
};

export function createVasClient({ baseUrl, token, fetch }: VasClientOptions) {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` }, fetch });
}

export type VasClient = ReturnType<typeof createVasClient>;
