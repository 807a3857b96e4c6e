// The handoff extension's references to other assistants (docs/handoff.md): every destination an assistant
// of the same organization, with a unique name; an assistant a destination names is not deleted (409).
import { and, eq, inArray, sql } from "drizzle-orm";
import { assistants, extensions } from "../db/schema";
import type { DbOrTx } from "../db/client";
import type { FieldError } from "../errors";
import { HANDOFF, type HandoffInput } from "../models/handoff";
import type { ExtensionInput } from "../models/assistants";

/**
 * Destinations that are not assistants of `organizationId` (or are `selfId`), and names given twice (a name left out is the
 * assistant's). Runs after the shapes are checked. The destinations are locked (key share) until the
 * write commits, so a concurrent delete either waits and then sees the reference, or goes first and the
 * destination is unknown here.
 */
export async function handoffDestinationErrors(
  tx: DbOrTx,
  organizationId: string,
  selfId: string | null,
  input: ExtensionInput[],
): Promise<FieldError[]> {
  const handoffs = input.flatMap((ext, i) =>
    ext.type === HANDOFF ? [{ i, destinations: (ext.parameters as HandoffInput).destinations }] : [],
  );
  const ids = [...new Set(handoffs.flatMap((h) => h.destinations.map((d) => d.assistantId)))];
  if (ids.length === 0) return [];
  const found = await tx
    .select({ id: assistants.id, name: assistants.name })
    .from(assistants)
    .where(
      and(inArray(assistants.id, ids), eq(assistants.organizationId, organizationId), eq(assistants.kind, "assistant")),
    )
    .for("key share");
  const names = new Map(found.map((a) => [a.id, a.name]));
  const errors: FieldError[] = [];
  for (const { i, destinations } of handoffs) {
    const seen = new Set<string>();
    destinations.forEach((d, j) => {
      const prefix = `extensions[${i}].parameters.destinations[${j}]`;
      const assistantName = names.get(d.assistantId);
      if (d.assistantId === selfId) {
        errors.push({ field: `${prefix}.assistantId`, message: "an assistant cannot hand the caller to itself" });
        return;
      }
      if (assistantName === undefined) {
        errors.push({ field: `${prefix}.assistantId`, message: "no such assistant in this organization" });
        return;
      }
      // the LLM picks a destination by its name: two alike would be one enum value
      const name = d.name ?? assistantName;
      if (seen.has(name))
        errors.push({
          field: `${prefix}.${d.name === undefined ? "assistantId" : "name"}`,
          message: `another destination is named ${name}`,
        });
      seen.add(name);
    });
  }
  return errors;
}

/** The assistants and agents of the organization whose handoff extensions name `assistantId`. */
export async function handoffsNaming(tx: DbOrTx, organizationId: string, assistantId: string) {
  return tx
    .selectDistinct({ id: assistants.id, kind: assistants.kind, name: assistants.name })
    .from(extensions)
    .innerJoin(assistants, eq(assistants.id, extensions.assistantId))
    .where(
      and(
        eq(assistants.organizationId, organizationId),
        eq(extensions.type, HANDOFF),
        sql`${extensions.parameters}->'destinations' @> ${JSON.stringify([{ assistantId }])}::jsonb`,
      ),
    )
    .orderBy(assistants.name);
}
