// Test suites: a named, ordered list of the organization's scenarios and how often to run each.
import { and, eq, inArray, sql } from "drizzle-orm";
import { testScenarios, testSuiteScenarios, testSuites } from "../../db/schema";
import type { Db, DbOrTx } from "../../db/client";
import type { FieldError } from "../../errors";
import type { PageRequest } from "../../models/common";
import type { SuiteInput } from "../../models/testing";
import type { OrgScope } from "../auth";
import { throwIfAny } from "../extension-rules";
import { parsePaging, selectPage } from "../paging";
import { orConflict, single } from "../rows";

export const SUITE = "test suite";

const outerId = sql.raw(`"test_suites"."id"`);
const columns = {
  id: testSuites.id,
  name: testSuites.name,
  scenarioIds: sql<
    string[]
  >`coalesce((select array_agg(s.scenario_id order by s.position) from ${testSuiteScenarios} s where s.suite_id = ${outerId}), '{}')`,
  repeat: testSuites.repeat,
  createdAt: testSuites.createdAt,
  updatedAt: testSuites.updatedAt,
};
const sortable = {
  id: testSuites.id,
  name: testSuites.name,
  createdAt: testSuites.createdAt,
  updatedAt: testSuites.updatedAt,
};
const inScope = (scope: OrgScope) => eq(testSuites.organizationId, scope.organizationId);
const byId = (scope: OrgScope, id: string) => and(inScope(scope), eq(testSuites.id, id));
type SuiteRow = Awaited<ReturnType<typeof selectSuites>>[number];
const shown = (row: SuiteRow) => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const selectSuites = (db: DbOrTx) => db.select(columns).from(testSuites);

export const getSuite = async (db: DbOrTx, scope: OrgScope, id: string) =>
  shown(await single(selectSuites(db).where(byId(scope, id)), SUITE));

export async function listSuites(db: DbOrTx, scope: OrgScope, query: PageRequest) {
  const paging = parsePaging(query, sortable, "name,asc");
  const where = inScope(scope);
  const page = await selectPage(db, testSuites, where, paging, (limit, offset, orderBy) =>
    selectSuites(db)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
  return { ...page, data: page.data.map(shown) };
}

/** Every id must be one of the organization's scenarios, and named once. */
async function scenarioIdErrors(db: DbOrTx, scope: OrgScope, ids: string[]): Promise<FieldError[]> {
  const found = await db
    .select({ id: testScenarios.id })
    .from(testScenarios)
    .where(and(eq(testScenarios.organizationId, scope.organizationId), inArray(testScenarios.id, ids)));
  const known = new Set(found.map((r) => r.id));
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  ids.forEach((id, i) => {
    if (!known.has(id)) errors.push({ field: `scenarioIds[${i}]`, message: "no such test scenario" });
    else if (seen.has(id)) errors.push({ field: `scenarioIds[${i}]`, message: "named twice" });
    seen.add(id);
  });
  return errors;
}

async function writeMembers(db: DbOrTx, suiteId: string, ids: string[]) {
  await db.delete(testSuiteScenarios).where(eq(testSuiteScenarios.suiteId, suiteId));
  await orConflict(
    db.insert(testSuiteScenarios).values(ids.map((scenarioId, position) => ({ suiteId, position, scenarioId }))),
    { reference: "a scenario of the suite was deleted meanwhile" },
  );
}

export async function createSuite(db: Db, scope: OrgScope, input: SuiteInput) {
  throwIfAny(await scenarioIdErrors(db, scope, input.scenarioIds));
  const id = await db.transaction(async (tx) => {
    const [created] = await tx
      .insert(testSuites)
      .values({ organizationId: scope.organizationId, name: input.name, repeat: input.repeat ?? 1 })
      .returning({ id: testSuites.id });
    await writeMembers(tx, created!.id, input.scenarioIds);
    return created!.id;
  });
  return getSuite(db, scope, id);
}

export async function updateSuite(db: Db, scope: OrgScope, id: string, input: SuiteInput) {
  throwIfAny(await scenarioIdErrors(db, scope, input.scenarioIds));
  await db.transaction(async (tx) => {
    await single(
      tx
        .update(testSuites)
        .set({ name: input.name, repeat: input.repeat ?? 1, updatedAt: new Date() })
        .where(byId(scope, id))
        .returning({ id: testSuites.id }),
      SUITE,
    );
    await writeMembers(tx, id, input.scenarioIds);
  });
  return getSuite(db, scope, id);
}

export const deleteSuite = (db: DbOrTx, scope: OrgScope, id: string) =>
  single(db.delete(testSuites).where(byId(scope, id)).returning({ id: testSuites.id }), SUITE);
