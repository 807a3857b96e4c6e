// What a call needs of its assistant or agent: prompt, greeting, strategy, tools, and its owners.
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { assistants, extensions, llmStrategies, organizations, type AssistantKind } from "../db/schema";

export type CallAssistant = NonNullable<Awaited<ReturnType<typeof loadCallAssistant>>>;

export async function loadCallAssistant(db: Db, kind: AssistantKind, id: string) {
  const [row] = await db
    .select({
      id: assistants.id,
      kind: assistants.kind,
      organizationId: assistants.organizationId,
      vendorId: organizations.vendorId,
      systemPrompt: assistants.systemPrompt,
      greeting: assistants.systemPromptGreeting,
      strategyType: llmStrategies.type,
      strategyParameters: llmStrategies.parameters,
    })
    .from(assistants)
    .innerJoin(organizations, eq(organizations.id, assistants.organizationId))
    .leftJoin(llmStrategies, eq(llmStrategies.id, assistants.llmAudioContentGenerationStrategyId))
    .where(and(eq(assistants.id, id), eq(assistants.kind, kind)))
    .limit(1);
  if (!row) return null;
  const tools = await db
    .select({ type: extensions.type, parameters: extensions.parameters })
    .from(extensions)
    .where(eq(extensions.assistantId, id))
    .orderBy(extensions.position);
  const { strategyType, strategyParameters, ...assistant } = row;
  return {
    ...assistant,
    strategy: strategyType === null ? null : { type: strategyType, parameters: strategyParameters ?? {} },
    extensions: tools,
  };
}
