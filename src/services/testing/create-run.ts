// POST P/test-runs: the target, the scenarios frozen as they are now, a result row per scenario and
// iteration, and a NOTIFY for the worker that starts the run's workflow. Everything a run could only
// find out later (a tool the target does not have, a criterion its modality cannot measure) is a 400 here.
import { and, eq, inArray, sql } from "drizzle-orm";
import {
  TEST_RUNS_CHANNEL,
  testResults,
  testRuns,
  testScenarios,
  testSuiteScenarios,
  testSuites,
  type RunScenario,
  type TestModality,
} from "../../db/schema";
import type { Db } from "../../db/client";
import { badRequest, type FieldError } from "../../errors";
import { scenarioErrors, type Criterion, type RunInput, type ScenarioInput } from "../../models/testing";
import { appliesIn } from "../../testing/criteria";
import type { OrgScope } from "../auth";
import { throwIfAny } from "../extension-rules";
import { freeFormErrors } from "../free-form-limits";
import { getRun } from "./runs";
import { targetToolNames } from "./target-tools";

type Sourced = { field: string; scenario: RunScenario };

function exactlyOne(input: RunInput, names: (keyof RunInput)[]) {
  const given = names.filter((n) => input[n] !== undefined);
  if (given.length !== 1) throw badRequest(given[1] ?? names[0]!, `give exactly one of ${names.join(", ")}`);
}

const frozen = (scenarioId: string | null, input: ScenarioInput): RunScenario => {
  const { description: _d, tags: _t, ...rest } = input;
  return { scenarioId, ...rest };
};

async function storedScenarios(db: Db, scope: OrgScope, ids: string[], field: (i: number) => string) {
  const rows = await db
    .select()
    .from(testScenarios)
    .where(and(eq(testScenarios.organizationId, scope.organizationId), inArray(testScenarios.id, ids)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id, i): Sourced => {
    const row = byId.get(id);
    if (!row) throw badRequest(field(i), "no such test scenario");
    const scenario = { name: row.name, kind: row.kind, ...row.definition } as unknown as ScenarioInput;
    return { field: field(i), scenario: frozen(row.id, scenario) };
  });
}

async function resolveScenarios(
  db: Db,
  scope: OrgScope,
  input: RunInput,
): Promise<{ list: Sourced[]; repeat: number }> {
  if (input.scenarios) {
    const errors = input.scenarios.flatMap((s, i) =>
      [...scenarioErrors(s), ...freeFormErrors(s, "body")].map((e) => ({ ...e, field: `scenarios[${i}].${e.field}` })),
    );
    throwIfAny(errors);
    return {
      list: input.scenarios.map((s, i) => ({ field: `scenarios[${i}]`, scenario: frozen(null, s) })),
      repeat: input.repeat ?? 1,
    };
  }
  if (input.scenarioIds)
    return {
      list: await storedScenarios(db, scope, input.scenarioIds, (i) => `scenarioIds[${i}]`),
      repeat: input.repeat ?? 1,
    };
  const [suite] = await db
    .select({ repeat: testSuites.repeat })
    .from(testSuites)
    .where(and(eq(testSuites.id, input.suiteId!), eq(testSuites.organizationId, scope.organizationId)));
  if (!suite) throw badRequest("suiteId", "no such test suite");
  const members = await db
    .select({ id: testSuiteScenarios.scenarioId })
    .from(testSuiteScenarios)
    .where(eq(testSuiteScenarios.suiteId, input.suiteId!))
    .orderBy(testSuiteScenarios.position);
  const ids = members.map((m) => m.id);
  return {
    list: await storedScenarios(db, scope, ids, (i) => `suiteId.scenarios[${i}]`),
    repeat: input.repeat ?? suite.repeat,
  };
}

/** Mocks and criteria may only name the target's tools; a required criterion must apply in the modality. */
function fitErrors({ field, scenario }: Sourced, tools: Set<string>, modality: TestModality): FieldError[] {
  const errors: FieldError[] = [];
  const unknownTool = (name: string) => `the target has no tool ${name} (it has ${[...tools].join(", ")})`;
  (scenario.toolMocks as { tool: string }[] | undefined)?.forEach((mock, j) => {
    if (!tools.has(mock.tool)) errors.push({ field: `${field}.toolMocks[${j}].tool`, message: unknownTool(mock.tool) });
  });
  (scenario.criteria as Criterion[]).forEach((criterion, k) => {
    if ((criterion.type === "toolCalled" || criterion.type === "toolNotCalled") && !tools.has(criterion.tool))
      errors.push({ field: `${field}.criteria[${k}].tool`, message: unknownTool(criterion.tool) });
    if ((criterion.required ?? true) && !appliesIn(criterion, modality))
      errors.push({
        field: `${field}.criteria[${k}]`,
        message: `a required ${criterion.type} criterion cannot be measured in a ${modality} run`,
      });
  });
  return errors;
}

export async function createRun(db: Db, scope: OrgScope, input: RunInput) {
  exactlyOne(input, ["assistantId", "agentId"]);
  exactlyOne(input, ["suiteId", "scenarioIds", "scenarios"]);
  const targetField = input.assistantId ? "assistantId" : "agentId";
  const kind = input.assistantId ? "assistant" : "agent";
  const targetId = (input.assistantId ?? input.agentId)!;
  const tools = await targetToolNames(db, scope, kind, targetId);
  if (!tools) throw badRequest(targetField, `no such ${kind}`);
  const modality = input.modality ?? "text";
  const { list, repeat } = await resolveScenarios(db, scope, input);
  throwIfAny(list.flatMap((s) => fitErrors(s, tools, modality)));

  const id = await db.transaction(async (tx) => {
    const [run] = await tx
      .insert(testRuns)
      .values({
        organizationId: scope.organizationId,
        assistantId: targetId,
        targetKind: kind,
        suiteId: input.suiteId ?? null,
        modality,
        concurrency: input.concurrency ?? 4,
        labels: input.labels ?? {},
        scenarios: list.map((s) => s.scenario),
      })
      .returning({ id: testRuns.id });
    const rows = list.flatMap((_, position) =>
      Array.from({ length: repeat }, (_, i) => ({ runId: run!.id, position, iteration: i + 1 })),
    );
    await tx.insert(testResults).values(rows);
    await tx.execute(sql`select pg_notify(${TEST_RUNS_CHANNEL}, ${run!.id})`);
    return run!.id;
  });
  return getRun(db, scope, id);
}
