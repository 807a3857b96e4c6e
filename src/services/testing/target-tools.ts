// The tool names the LLMs of an assistant or agent see (its own, and those of the assistants its handoffs
// may hand the call to, who answer in the same call), which a run's mocks and criteria may name.
import { and, eq, inArray } from "drizzle-orm";
import { assistants, extensions, type AssistantKind } from "../../db/schema";
import type { DbOrTx } from "../../db/client";
import { HANDOFF, HANDOFF_TOOL_NAME } from "../../models/handoff";
import { END_CALL_TOOL_NAME } from "../../models/tool-schema";
import { isObject } from "../../lib/is-object";
import { KNOWLEDGE_TOOL_NAME, TRANSFER_TOOL_NAME } from "../../voice/tools";
import type { OrgScope } from "../auth";

/** The name each extension type gives its tool; types without one add no tool. */
const toolNameOf: Record<string, (parameters: Record<string, unknown>) => string | null> = {
  tool_webhook: (p) => (typeof p.name === "string" ? p.name : null),
  knowledge_base: (p) => (typeof p.name === "string" ? p.name : KNOWLEDGE_TOOL_NAME),
  transfer_call: (p) => (typeof p.name === "string" ? p.name : TRANSFER_TOOL_NAME),
  [HANDOFF]: (p) => (typeof p.name === "string" ? p.name : HANDOFF_TOOL_NAME),
};

/** The assistants a handoff extension may hand the call to. */
const destinationsOf = (p: Record<string, unknown>) =>
  Array.isArray(p.destinations)
    ? p.destinations.flatMap((d) => (isObject(d) && typeof d.assistantId === "string" ? [d.assistantId] : []))
    : [];

const extensionRows = (db: DbOrTx, scope: OrgScope, kind: AssistantKind, ids: string[]) =>
  db
    .select({ id: assistants.id, type: extensions.type, parameters: extensions.parameters })
    .from(assistants)
    .leftJoin(extensions, eq(extensions.assistantId, assistants.id))
    .where(
      and(inArray(assistants.id, ids), eq(assistants.kind, kind), eq(assistants.organizationId, scope.organizationId)),
    );

/** null when the organization has no such assistant (or agent). */
export async function targetToolNames(
  db: DbOrTx,
  scope: OrgScope,
  kind: AssistantKind,
  id: string,
): Promise<Set<string> | null> {
  let rows = await extensionRows(db, scope, kind, [id]);
  if (rows.length === 0) return null;
  const names = new Set([END_CALL_TOOL_NAME]);
  const seen = new Set([id]);
  // breadth first through the handoffs' destinations, each assistant once
  while (rows.length > 0) {
    const next: string[] = [];
    for (const row of rows) {
      const parameters = row.parameters ?? {};
      const name = row.type ? toolNameOf[row.type]?.(parameters) : null;
      if (name) names.add(name);
      if (row.type !== HANDOFF) continue;
      for (const destination of destinationsOf(parameters)) {
        if (seen.has(destination)) continue;
        seen.add(destination);
        next.push(destination);
      }
    }
    rows = next.length > 0 ? await extensionRows(db, scope, "assistant", next) : [];
  }
  return names;
}
