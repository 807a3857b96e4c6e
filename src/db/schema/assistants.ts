import { index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { knowledgeBases } from "./knowledge";
import { llmStrategies } from "./strategies";
import { sipPhoneNumbers } from "./sip";
import { id, organizations, ownedByOrganization, timestamps } from "./tenancy";

// Assistants and agents share one table: the spec gives them the same shape, and one phone number
// may serve at most one of either, which a single unique index enforces.
export const assistantKinds = ["assistant", "agent"] as const;
export type AssistantKind = (typeof assistantKinds)[number];

export const assistants = pgTable(
  "assistants",
  {
    ...ownedByOrganization(),
    kind: text("kind").$type<AssistantKind>().notNull(),
    name: text("name").notNull(),
    systemPrompt: text("system_prompt"),
    systemPromptGreeting: text("system_prompt_greeting"),
    llmAudioContentGenerationStrategyId: uuid("llm_strategy_id").references(() => llmStrategies.id, {
      onDelete: "restrict",
    }),
    telephoneNumberId: uuid("telephone_number_id").references(() => sipPhoneNumbers.id, { onDelete: "restrict" }),
    ...timestamps,
  },
  (t) => [
    // a list page's sorts (name the default; createdAt, newest first), each with the id tie-breaker: read in index order
    index("assistants_org_kind_name_id_idx").on(t.organizationId, t.kind, t.name, t.id),
    index("assistants_org_kind_created_id_idx").on(t.organizationId, t.kind, t.createdAt.desc().nullsFirst(), t.id),
    uniqueIndex("assistants_telephone_number_uq").on(t.telephoneNumberId),
  ],
);

// How many assistants and agents each organization has, kept by triggers on assistants (migration
// 0003), so a list's totalElements is one row read instead of a count over every row.
export const assistantCounts = pgTable(
  "assistant_counts",
  {
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    kind: text("kind").$type<AssistantKind>().notNull(),
    n: integer("n").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.kind] })],
);

// extensions and hooks are ordered elements of one assistant's lists
const listElement = () => ({
  id: id(),
  assistantId: uuid("assistant_id")
    .notNull()
    .references(() => assistants.id, { onDelete: "cascade" }),
  position: integer("position").notNull(),
  type: text("type").notNull(),
});

export const extensions = pgTable(
  "extensions",
  {
    ...listElement(),
    name: text("name"),
    parameters: jsonb("parameters").$type<Record<string, unknown>>().notNull(),
    // a knowledge_base extension's write-only authToken, encrypted like a hook secret, never in parameters
    secretEncrypted: text("secret_encrypted"),
    // a knowledge_base extension's built-in knowledge base: deleting one in use is refused (409); "no action", not
    // "restrict", so that deleting an organization (which cascades to both) is checked at the statement's end
    knowledgeBaseId: uuid("knowledge_base_id").references(() => knowledgeBases.id, { onDelete: "no action" }),
  },
  (t) => [index("extensions_assistant_idx").on(t.assistantId, t.position)],
);

export type HookParameters = { url?: string; method?: string; headers?: Record<string, string>; [k: string]: unknown };

export const callEventHooks = pgTable(
  "call_event_hooks",
  {
    ...listElement(),
    // everything but the secret, which is write-only and kept encrypted apart
    parameters: jsonb("parameters").$type<HookParameters>().notNull(),
    secretEncrypted: text("secret_encrypted"),
  },
  (t) => [index("call_event_hooks_assistant_idx").on(t.assistantId, t.position)],
);
