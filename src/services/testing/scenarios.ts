// Test scenarios: stored as given (the parts runs read as one `definition`), shown with their defaults.
import { and, eq } from "drizzle-orm";
import { testScenarios } from "../../db/schema";
import type { DbOrTx } from "../../db/client";
import type { PageRequest } from "../../models/common";
import { scenarioErrors, type ScenarioInput } from "../../models/testing";
import type { OrgScope } from "../auth";
import { throwIfAny } from "../extension-rules";
import { freeFormErrors } from "../free-form-limits";
import { parsePaging, selectPage } from "../paging";
import { orConflict, single } from "../rows";

export const SCENARIO = "test scenario";

type Row = typeof testScenarios.$inferSelect;
const sortable = {
  id: testScenarios.id,
  name: testScenarios.name,
  kind: testScenarios.kind,
  createdAt: testScenarios.createdAt,
  updatedAt: testScenarios.updatedAt,
};
const inScope = (scope: OrgScope) => eq(testScenarios.organizationId, scope.organizationId);
const byId = (scope: OrgScope, id: string) => and(inScope(scope), eq(testScenarios.id, id));

/** The scenario as the API shows it: every default filled in, so a reader sees what a run will do. */
export function scenarioOut(row: Row) {
  const definition = row.definition as Omit<ScenarioInput, "name" | "description" | "tags" | "kind">;
  const simulated = row.kind === "simulated" ? { maxTurns: definition.maxTurns ?? 12 } : {};
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    tags: row.tags,
    kind: row.kind,
    ...definition,
    ...simulated,
    maxDurationSeconds: definition.maxDurationSeconds ?? 300,
    toolMocks: definition.toolMocks ?? [],
    toolPolicy: definition.toolPolicy ?? "mock",
    criteria: definition.criteria.map((c) => ({ ...c, required: c.required ?? true })),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
export type Scenario = ReturnType<typeof scenarioOut>;

function row(input: ScenarioInput) {
  const { name, description, tags, kind, ...definition } = input;
  throwIfAny([...scenarioErrors(input), ...freeFormErrors(definition, "body")]);
  return { name, description: description ?? null, tags: tags ?? [], kind, definition };
}

export const getScenario = async (db: DbOrTx, scope: OrgScope, id: string) =>
  scenarioOut(await single(db.select().from(testScenarios).where(byId(scope, id)), SCENARIO));

export async function listScenarios(db: DbOrTx, scope: OrgScope, query: PageRequest) {
  const paging = parsePaging(query, sortable, "name,asc");
  const where = inScope(scope);
  const page = await selectPage(db, testScenarios, where, paging, (limit, offset, orderBy) =>
    db
      .select()
      .from(testScenarios)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
  return { ...page, data: page.data.map(scenarioOut) };
}

export async function createScenario(db: DbOrTx, scope: OrgScope, input: ScenarioInput) {
  const [created] = await db
    .insert(testScenarios)
    .values({ organizationId: scope.organizationId, ...row(input) })
    .returning();
  return scenarioOut(created!);
}

export async function updateScenario(db: DbOrTx, scope: OrgScope, id: string, input: ScenarioInput) {
  const values = row(input);
  return scenarioOut(
    await single(
      db
        .update(testScenarios)
        .set({ ...values, updatedAt: new Date() })
        .where(byId(scope, id))
        .returning(),
      SCENARIO,
    ),
  );
}

export const deleteScenario = (db: DbOrTx, scope: OrgScope, id: string) =>
  single(
    orConflict(db.delete(testScenarios).where(byId(scope, id)).returning({ id: testScenarios.id }), {
      reference: "a test suite names this scenario; take it out of the suite first",
    }),
    SCENARIO,
  );
