// Testing an assistant before it goes live (design.md, "the third contract"): scenarios and suites.
import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, primaryKey, text, timestamp, unique, uuid } from "drizzle-orm/pg-core";
import type { AssistantKind } from "./assistants";
import { id, ownedByOrganization, timestamps } from "./tenancy";

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

export const testModalities = ["text", "audio"] as const;
export type TestModality = (typeof testModalities)[number];
export const testRunStatuses = ["queued", "running", "completed", "canceled"] as const;
export type TestRunStatus = (typeof testRunStatuses)[number];
export const testVerdicts = ["passed", "failed", "flaky", "error"] as const;
export type TestVerdict = (typeof testVerdicts)[number];
export const testResultStatuses = ["pending", "running", "passed", "failed", "error"] as const;
export type TestResultStatus = (typeof testResultStatuses)[number];

/** A scenario as a run froze it at creation: later edits of the stored one do not change a run. */
export type RunScenario = { scenarioId: string | null; name: string; kind: TestScenarioKind } & Record<string, unknown>;

export const testRuns = pgTable(
  "test_runs",
  {
    ...ownedByOrganization(),
    // the assistant or agent under test (assistants holds both kinds); no foreign key: a run stays on
    // record after its target is deleted, like a call
    assistantId: uuid("assistant_id").notNull(),
    targetKind: text("target_kind").$type<AssistantKind>().notNull(),
    suiteId: uuid("suite_id"),
    modality: text("modality").$type<TestModality>().notNull(),
    concurrency: integer("concurrency").notNull(),
    labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
    scenarios: jsonb("scenarios").$type<RunScenario[]>().notNull(),
    status: text("status").$type<TestRunStatus>().notNull().default("queued"),
    verdict: text("verdict").$type<TestVerdict>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp("started_at", { withTimezone: true }),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [
    index("test_runs_org_created_idx").on(t.organizationId, t.createdAt),
    // the worker's starter finds the runs no workflow took yet
    index("test_runs_queued_idx").on(t.status).where(sql`status = 'queued'`),
  ],
);

export const testResults = pgTable(
  "test_results",
  {
    id: id(),
    runId: uuid("run_id")
      .notNull()
      .references(() => testRuns.id, { onDelete: "cascade" }),
    /** index into the run's scenarios */
    position: integer("position").notNull(),
    iteration: integer("iteration").notNull(),
    status: text("status").$type<TestResultStatus>().notNull().default("pending"),
    criteria: jsonb("criteria").$type<Record<string, unknown>[]>().notNull().default([]),
    agentTaskId: uuid("agent_task_id"),
    metrics: jsonb("metrics").$type<Record<string, unknown>>(),
    hooks: jsonb("hooks").$type<Record<string, unknown>[]>().notNull().default([]),
    transcript: jsonb("transcript").$type<Record<string, unknown>[]>().notNull().default([]),
    error: text("error"),
    // sha256 of the secret the worker's test call presents to the bridge instead of an API token
    callSecretHash: text("call_secret_hash"),
    // the running call's callId, so a retried activity or a cancel can find it
    callId: uuid("call_id"),
    startedAt: timestamp("started_at", { withTimezone: true }),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [unique("test_results_run_position_iteration").on(t.runId, t.position, t.iteration)],
);

/** NOTIFY channel: a test run was queued; the worker starts its workflow. */
export const TEST_RUNS_CHANNEL = "test_runs";
