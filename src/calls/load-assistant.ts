// What a call needs of its assistant or agent: prompt, greeting, strategy, tools, and its owners.
import { and, eq, sql } from "drizzle-orm";
import { answerPathOf, readModelOf, type Db } from "../db/client";
import { readTags } from "../db/read-model";
import { assistants, extensions, llmStrategies, organizations, type AssistantKind } from "../db/schema";

export type CallAssistant = NonNullable<Awaited<ReturnType<typeof readCallAssistant>>>;

/**
 * Through the read model (src/db/read-model.ts): a call starts from memory while the process is synced,
 * and sees any change whose answer was given before. Shared: callers do not change what they get.
 */
export const loadCallAssistant = (db: Db, kind: AssistantKind, id: string) =>
  readModelOf(db).read(
    `call:${kind}:${id}`,
    (found) => [
      readTags.assistant(id),
      readTags.org(found.organizationId),
      ...(found.strategyId ? [readTags.strategy(found.strategyId)] : []),
    ],
    // a caller waits on a call's start: the answer path's connections where the handle has them
    () => readCallAssistant(answerPathOf(db), kind, id),
  );

async function readCallAssistant(db: Db, kind: AssistantKind, id: string) {
  const [row] = await db
    .select({
      id: assistants.id,
      kind: assistants.kind,
      organizationId: assistants.organizationId,
      vendorId: organizations.vendorId,
      systemPrompt: assistants.systemPrompt,
      greeting: assistants.systemPromptGreeting,
      strategyId: llmStrategies.id,
      strategyType: llmStrategies.type,
      strategyParameters: llmStrategies.parameters,
      // the tools in the same round trip: one query less for every call that starts
      // secretEncrypted: a knowledge_base extension's sealed authToken, opened only when the call starts
      extensions: sql<
        { type: string; parameters: Record<string, unknown>; secretEncrypted: string | null }[]
      >`coalesce((
        select json_agg(json_build_object('type', ${extensions.type}, 'parameters', ${extensions.parameters},
          'secretEncrypted', ${extensions.secretEncrypted}) order by ${extensions.position})
        from ${extensions} where ${extensions.assistantId} = ${assistants.id}), '[]'::json)`,
    })
    .from(assistants)
    .innerJoin(organizations, eq(organizations.id, assistants.organizationId))
    .leftJoin(llmStrategies, eq(llmStrategies.id, assistants.llmAudioContentGenerationStrategyId))
    .where(and(eq(assistants.id, id), eq(assistants.kind, kind)))
    .limit(1);
  if (!row) return null;
  const { strategyType, strategyParameters, ...assistant } = row;
  return {
    ...assistant,
    strategy: strategyType === null ? null : { type: strategyType, parameters: strategyParameters ?? {} },
  };
}

/** The organization's assistants' names by id: what a handoff destination without a name of its own goes by. */
export async function loadAssistantNames(db: Db, organizationId: string): Promise<ReadonlyMap<string, string>> {
  const rows = await readModelOf(db).read(
    `assistant-names:${organizationId}`,
    () => [readTags.assistants(organizationId), readTags.org(organizationId)],
    () =>
      db
        .select({ id: assistants.id, name: assistants.name })
        .from(assistants)
        .where(and(eq(assistants.organizationId, organizationId), eq(assistants.kind, "assistant"))),
  );
  return new Map((rows ?? []).map((row) => [row.id, row.name]));
}
