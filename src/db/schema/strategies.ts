import { index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { ownedByOrganization, timestamps } from "./tenancy";

export const llmStrategies = pgTable(
  "llm_generation_strategies",
  {
    ...ownedByOrganization(),
    name: text("name").notNull(),
    type: text("type").notNull(),
    parameters: jsonb("parameters").$type<Record<string, unknown>>().notNull(),
    ...timestamps,
  },
  (t) => [index("llm_strategies_org_idx").on(t.organizationId, t.name)],
);
