// Reading test runs and their results, JUnit, and canceling a run.
import { and, eq, inArray, sql } from "drizzle-orm";
import { CALL_HANGUP_CHANNEL, agentTasks, testResults, testRuns } from "../../db/schema";
import type { DbOrTx } from "../../db/client";
import { conflict, notFound } from "../../errors";
import type { PageRequest } from "../../models/common";
import { junitXml, type JunitResult } from "../../testing/junit";
import type { CriterionResult } from "../../testing/criteria";
import { transcriptLines, type Utterance } from "../../testing/observed-call";
import type { OrgScope } from "../auth";
import { parsePaging, selectPage } from "../paging";
import { single } from "../rows";

export const RUN = "test run";
const finished = ["passed", "failed", "error"] as const;

const outerId = sql.raw(`"test_runs"."id"`);
const countOf = (where: string) =>
  sql<number>`(select count(*)::int from ${testResults} r where r.run_id = ${outerId}${sql.raw(where ? ` and ${where}` : "")})`;
const columns = {
  id: testRuns.id,
  targetId: testRuns.assistantId,
  targetKind: testRuns.targetKind,
  suiteId: testRuns.suiteId,
  modality: testRuns.modality,
  concurrency: testRuns.concurrency,
  status: testRuns.status,
  verdict: testRuns.verdict,
  labels: testRuns.labels,
  createdAt: testRuns.createdAt,
  startedAt: testRuns.startedAt,
  endedAt: testRuns.endedAt,
  total: countOf(""),
  passed: countOf("r.status = 'passed'"),
  failed: countOf("r.status = 'failed'"),
  error: countOf("r.status = 'error'"),
};
type Row = Awaited<ReturnType<ReturnType<typeof selectRuns>["where"]>>[number];
const selectRuns = (db: DbOrTx) => db.select(columns).from(testRuns);
const iso = (d: Date | null) => d?.toISOString() ?? null;

function runOut({ targetId, targetKind, total, passed, failed, error, ...run }: Row) {
  return {
    id: run.id,
    assistantId: targetKind === "assistant" ? targetId : null,
    agentId: targetKind === "agent" ? targetId : null,
    suiteId: run.suiteId,
    modality: run.modality,
    concurrency: run.concurrency,
    status: run.status,
    verdict: run.verdict,
    counts: { total, passed, failed, error, pending: total - passed - failed - error },
    labels: run.labels,
    createdAt: run.createdAt.toISOString(),
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
  };
}
export type RunOut = ReturnType<typeof runOut>;

const inScope = (scope: OrgScope) => eq(testRuns.organizationId, scope.organizationId);
const byId = (scope: OrgScope, id: string) => and(inScope(scope), eq(testRuns.id, id));

export const getRun = async (db: DbOrTx, scope: OrgScope, id: string) =>
  runOut(await single(selectRuns(db).where(byId(scope, id)), RUN));

const sortable = { id: testRuns.id, createdAt: testRuns.createdAt, status: testRuns.status };

export async function listRuns(db: DbOrTx, scope: OrgScope, query: PageRequest) {
  const paging = parsePaging(query, sortable, "createdAt,desc");
  const where = inScope(scope);
  const page = await selectPage(db, testRuns, where, paging, (limit, offset, orderBy) =>
    selectRuns(db)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
  return { ...page, data: page.data.map(runOut) };
}

/**
 * Pending results never start (the workflow claims only while the run is running); the calls that
 * run are hung up like any call (NOTIFY to their bridges), and their results come in as they end.
 */
export async function cancelRun(db: DbOrTx, scope: OrgScope, id: string) {
  const [canceled] = await db
    .update(testRuns)
    .set({ status: "canceled", endedAt: new Date() })
    .where(and(byId(scope, id), inArray(testRuns.status, ["queued", "running"])))
    .returning({ id: testRuns.id });
  if (!canceled) {
    const run = await getRun(db, scope, id);
    if (run.status !== "canceled") throw conflict(`the run has already ${run.status}`);
    return run;
  }
  const live = await db
    .select({ callId: agentTasks.callId })
    .from(agentTasks)
    .where(and(eq(agentTasks.testRunId, id), inArray(agentTasks.status, ["offered", "active"])));
  for (const { callId } of live) await db.execute(sql`select pg_notify(${CALL_HANGUP_CHANNEL}, ${callId})`);
  return getRun(db, scope, id);
}

type ResultRow = typeof testResults.$inferSelect;
const scenarioOf = (scenarios: { scenarioId: string | null; name: string }[], position: number) =>
  scenarios[position] ?? { scenarioId: null, name: `scenario ${position + 1}` };

function resultOut(row: ResultRow, scenarios: { scenarioId: string | null; name: string }[]) {
  const scenario = scenarioOf(scenarios, row.position);
  return {
    id: row.id,
    scenarioId: scenario.scenarioId,
    scenarioName: scenario.name,
    iteration: row.iteration,
    status: row.status as (typeof finished)[number],
    criteria: row.criteria as CriterionResult[],
    agentTaskId: row.agentTaskId,
    metrics: row.metrics as {
      turns: number;
      durationMs: number;
      firstAudioMs: { p50: number; p95: number } | null;
    } | null,
    hooks: row.hooks,
    error: row.error,
  };
}

const finishedOf = (runId: string) => and(eq(testResults.runId, runId), inArray(testResults.status, [...finished]));
const resultSortable = { id: testResults.id, endedAt: testResults.endedAt, position: testResults.position };

/** The results that are in, in scenario order then iteration (what the run has decided so far). */
export async function listResults(db: DbOrTx, scope: OrgScope, runId: string, query: PageRequest) {
  const [run] = await db.select({ scenarios: testRuns.scenarios }).from(testRuns).where(byId(scope, runId));
  if (!run) throw notFound(RUN);
  const paging = parsePaging(query, resultSortable, "position,asc");
  const where = finishedOf(runId);
  const page = await selectPage(db, testResults, where, paging, (limit, offset, orderBy) =>
    db
      .select()
      .from(testResults)
      .where(where)
      .orderBy(...orderBy, testResults.iteration)
      .limit(limit)
      .offset(offset),
  );
  return { ...page, data: page.data.map((r) => resultOut(r, run.scenarios)) };
}

export async function runJunit(db: DbOrTx, scope: OrgScope, runId: string) {
  const [run] = await db
    .select({ id: testRuns.id, scenarios: testRuns.scenarios, labels: testRuns.labels })
    .from(testRuns)
    .where(byId(scope, runId));
  if (!run) throw notFound(RUN);
  const rows = await db
    .select()
    .from(testResults)
    .where(finishedOf(runId))
    .orderBy(testResults.position, testResults.iteration);
  const results: JunitResult[] = rows.map((row) => ({
    scenarioName: scenarioOf(run.scenarios, row.position).name,
    iteration: row.iteration,
    status: row.status as JunitResult["status"],
    criteria: row.criteria as CriterionResult[],
    error: row.error,
    durationMs: (row.metrics as { durationMs?: number } | null)?.durationMs ?? null,
    transcript: transcriptLines(row.transcript as Utterance[]).join("\n"),
  }));
  return junitXml({ id: run.id, name: `test run ${run.id}` }, results);
}
