// The tool names the LLM of an assistant or agent sees, which a run's mocks and criteria may name.
import { and, eq } from "drizzle-orm";
import { assistants, extensions, type AssistantKind } from "../../db/schema";
import type { DbOrTx } from "../../db/client";
import { END_CALL_TOOL_NAME } from "../../models/tool-schema";
import { KNOWLEDGE_TOOL_NAME, TRANSFER_TOOL_NAME } from "../../voice/tools";
import type { OrgScope } from "../auth";

/** The name each extension type gives its tool; types without one add no tool. */
const toolNameOf: Record<string, (parameters: Record<string, unknown>) => string | null> = {
  tool_webhook: (p) => (typeof p.name === "string" ? p.name : null),
  knowledge_base: (p) => (typeof p.name === "string" ? p.name : KNOWLEDGE_TOOL_NAME),
  transfer_call: (p) => (typeof p.name === "string" ? p.name : TRANSFER_TOOL_NAME),
};

/** null when the organization has no such assistant (or agent). */
export async function targetToolNames(
  db: DbOrTx,
  scope: OrgScope,
  kind: AssistantKind,
  id: string,
): Promise<Set<string> | null> {
  const rows = await db
    .select({ id: assistants.id, type: extensions.type, parameters: extensions.parameters })
    .from(assistants)
    .leftJoin(extensions, eq(extensions.assistantId, assistants.id))
    .where(and(eq(assistants.id, id), eq(assistants.kind, kind), eq(assistants.organizationId, scope.organizationId)));
  if (rows.length === 0) return null;
  const names = new Set([END_CALL_TOOL_NAME]);
  for (const row of rows) {
    const name = row.type ? toolNameOf[row.type]?.(row.parameters ?? {}) : null;
    if (name) names.add(name);
  }
  return names;
}
