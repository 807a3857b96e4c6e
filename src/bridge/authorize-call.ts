// Who may call which assistant: an API token reaching the assistant's organization (the admin token,
// a token of its vendor, or one of the organization itself). Refusals happen before any audio.
import type { Db } from "../db/client";
import type { AssistantKind } from "../db/schema";
import { badRequest, notFound } from "../errors";
import { isUuid } from "../lib/uuid";
import type { TokenResolver } from "../services/auth";
import { loadCallAssistant, type CallAssistant } from "../calls/load-assistant";

export type CallCredentials = {
  authorization: string | null;
  token: string | null;
  assistantId: string | null;
  agentId: string | null;
  /** the peer's address, for the failed-authentication throttle */
  source: string | null;
};

/** The assistant to connect to; throws AppError 401 / 400 / 404, or 429 for an address that failed too often. */
export async function authorizeCall(
  db: Db,
  tokens: TokenResolver,
  credentials: CallCredentials,
): Promise<CallAssistant> {
  const authorization = credentials.authorization ?? (credentials.token ? `Bearer ${credentials.token}` : null);
  tokens.admit(() => credentials.source, authorization);
  const principal = await tokens.resolve(authorization).catch((error: unknown) => {
    tokens.failed(credentials.source);
    throw error;
  });
  const { kind, id } = target(credentials);
  const assistant = await loadCallAssistant(db, kind, id);
  const reachable =
    assistant &&
    (principal.kind === "admin" ||
      (principal.kind === "vendor" && principal.vendorId === assistant.vendorId) ||
      (principal.kind === "organization" && principal.organizationId === assistant.organizationId));
  // another tenant's assistant is "not found", so ids of other tenants cannot be probed
  if (!reachable) throw notFound(kind);
  return assistant;
}

function target({ assistantId, agentId }: CallCredentials): { kind: AssistantKind; id: string } {
  if ((assistantId === null) === (agentId === null))
    throw badRequest("assistantId", "give exactly one of assistantId and agentId");
  const [kind, id] = assistantId !== null ? (["assistant", assistantId] as const) : (["agent", agentId!] as const);
  if (!isUuid(id)) throw badRequest(`${kind}Id`, "must be a UUID");
  return { kind, id };
}
