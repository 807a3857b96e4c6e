import { index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { organizations, timestamps } from "./tenancy";

export const llmStrategies = pgTable(
  "llm_generation_strategies",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    type: text("type").notNull(),
    parameters: jsonb("parameters").$type<Record<string, unknown>>().notNull(),
    ...timestamps,
  },
  (t) => [index("llm_strategies_org_idx").on(t.organizationId, t.name)],
);
