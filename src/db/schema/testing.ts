// Testing an assistant before it goes live (design.md, "the third contract"): scenarios and suites.
import { index, integer, jsonb, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { ownedByOrganization, timestamps } from "./tenancy";

export const testScenarioKinds = ["scripted", "simulated"] as const;
export type TestScenarioKind = (typeof testScenarioKinds)[number];

export const testScenarios = pgTable(
  "test_scenarios",
  {
    ...ownedByOrganization(),
    name: text("name").notNull(),
    description: text("description"),
    tags: jsonb("tags").$type<string[]>().notNull().default([]),
    kind: text("kind").$type<TestScenarioKind>().notNull(),
    // everything else of the scenario's body (turns or persona, mocks, criteria), validated by the API:
    // runs read it whole, nothing queries inside it
    definition: jsonb("definition").$type<Record<string, unknown>>().notNull(),
    ...timestamps,
  },
  (t) => [index("test_scenarios_org_name_idx").on(t.organizationId, t.name)],
);

export const testSuites = pgTable(
  "test_suites",
  {
    ...ownedByOrganization(),
    name: text("name").notNull(),
    repeat: integer("repeat").notNull().default(1),
    ...timestamps,
  },
  (t) => [index("test_suites_org_name_idx").on(t.organizationId, t.name)],
);

/** A suite's scenarios in order; a scenario a suite names cannot be deleted (409). */
export const testSuiteScenarios = pgTable(
  "test_suite_scenarios",
  {
    suiteId: uuid("suite_id")
      .notNull()
      .references(() => testSuites.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    // no action (not restrict): checked after an organization's delete has cascaded to both tables
    scenarioId: uuid("scenario_id")
      .notNull()
      .references(() => testScenarios.id),
  },
  (t) => [
    primaryKey({ columns: [t.suiteId, t.position] }),
    index("test_suite_scenarios_scenario_idx").on(t.scenarioId),
  ],
);
