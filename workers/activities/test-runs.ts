// The activities of a test run's workflow: claim the run, run one result (a real test call through the
// bridge, then its verdict), and close the run with its verdict. The database is the truth: a canceled
// run starts nothing more, and a retried result starts its call again.
import { createHash, randomBytes } from "node:crypto";
import { and, eq, inArray, sql } from "drizzle-orm";
import { Context } from "@temporalio/activity";
import type { Config } from "../../src/config";
import type { Db } from "../../src/db/client";
import { agentTasks, testResults, testRuns, type RunScenario } from "../../src/db/schema";
import { describeError } from "../../src/errors";
import { log } from "../../src/log";
import type { Criterion } from "../../src/models/testing";
import { evaluateCriteria, type JudgeVerdicts, type Modality } from "../../src/testing/criteria";
import { percentile } from "../../src/lib/percentile";
import { judgeCall } from "../../src/testing/judge";
import type { ObservedCall, ObservedToolCall } from "../../src/testing/observed-call";
import { nextCallerMove } from "../../src/testing/simulated-caller";
import { placeTestCall, type CallerStep, type TestCallOutcome } from "../../src/testing/test-call";
import { matchMock, type ToolMock } from "../../src/testing/tool-mocks";
import { resultStatus, verdictOfResults, type ResultStatus } from "../../src/testing/verdicts";

export type TestRunDeps = { db: Db; config: Pick<Config, "voice" | "testing"> };
export type TestRunPlan = { resultIds: string[]; concurrency: number } | null;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export function createTestRunActivities(deps: TestRunDeps) {
  const { db } = deps;

  /** Marks a queued run running; null when it was canceled (or already ended) meanwhile. */
  async function startTestRun(runId: string): Promise<TestRunPlan> {
    const [run] = await db
      .update(testRuns)
      .set({ status: "running", startedAt: sql`coalesce(${testRuns.startedAt}, now())` })
      .where(and(eq(testRuns.id, runId), inArray(testRuns.status, ["queued", "running"])))
      .returning({ concurrency: testRuns.concurrency });
    if (!run) return null;
    const results = await db
      .select({ id: testResults.id })
      .from(testResults)
      .where(and(eq(testResults.runId, runId), inArray(testResults.status, ["pending", "running"])))
      .orderBy(testResults.position, testResults.iteration);
    return { resultIds: results.map((r) => r.id), concurrency: run.concurrency };
  }

  /** The run's verdict from its results, unless it was canceled (a canceled run keeps none). */
  async function finishTestRun(runId: string): Promise<void> {
    const rows = await db
      .select({ position: testResults.position, status: testResults.status })
      .from(testResults)
      .where(eq(testResults.runId, runId));
    const decided = rows.filter((r) => r.status !== "pending" && r.status !== "running");
    const verdict = verdictOfResults(
      decided.map((r) => ({ scenarioKey: String(r.position), status: r.status as ResultStatus })),
    );
    await db
      .update(testRuns)
      .set({ status: "completed", verdict, endedAt: new Date() })
      .where(and(eq(testRuns.id, runId), eq(testRuns.status, "running")));
  }

  async function runTestResult(resultId: string): Promise<ResultStatus | "skipped"> {
    const [found] = await db
      .select({ result: testResults, run: testRuns })
      .from(testResults)
      .innerJoin(testRuns, eq(testRuns.id, testResults.runId))
      .where(eq(testResults.id, resultId));
    if (!found) return "skipped";
    const { result, run } = found;
    if (run.status !== "running") return "skipped";
    if (result.status !== "pending" && result.status !== "running") return result.status;
    const scenario = run.scenarios[result.position]!;
    // a retried activity (its worker died) places the call again with a new secret: the old one is void
    const secret = randomBytes(24).toString("base64url");
    const [claimed] = await db
      .update(testResults)
      .set({ status: "running", startedAt: new Date(), callSecretHash: sha256(secret), callId: null, hooks: [] })
      .where(and(eq(testResults.id, resultId), inArray(testResults.status, ["pending", "running"])))
      .returning({ id: testResults.id });
    if (!claimed) return "skipped"; // decided since it was read

    const context = Context.current();
    // three beats per time-out (the workflow sets it: TEST_RUN_HEARTBEAT_TIMEOUT_MS), at most 5 s apart
    const beatMs = Math.min(5_000, (context.info.heartbeatTimeoutMs ?? 15_000) / 3);
    const heartbeat = setInterval(() => context.heartbeat(), beatMs);
    try {
      const outcome = await placeCall(deps, resultId, secret, scenario, run.modality);
      return await storeOutcome(deps, { resultId, secret }, run.modality, scenario, outcome);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** A result whose activity gave up (three attempts): an error, so that the run can finish. */
  async function failTestResult(resultId: string, why: string): Promise<void> {
    await db
      .update(testResults)
      .set({ status: "error", error: `the test call could not be completed: ${why}`, endedAt: new Date() })
      .where(and(eq(testResults.id, resultId), inArray(testResults.status, ["pending", "running"])));
  }

  return {
    startTestRun,
    // what failed reaches the result's `error` once the attempts are spent (workflows/test-run.ts):
    // described, since drizzle's messages carry the query's parameters (the call's transcript)
    runTestResult: (resultId: string) =>
      runTestResult(resultId).catch((error: unknown) => {
        throw new Error(describeError(error));
      }),
    failTestResult,
    finishTestRun,
  };
}

export type TestRunActivities = ReturnType<typeof createTestRunActivities>;

function stepsOf(
  deps: TestRunDeps,
  scenario: RunScenario,
): (conversation: readonly ObservedCall["utterances"][number][]) => Promise<CallerStep> {
  if (scenario.kind === "scripted") {
    const turns = [...(scenario.turns as ({ say: string } | { silenceMs: number })[])];
    return async () => turns.shift() ?? { endCall: true };
  }
  const maxTurns = (scenario.maxTurns as number | undefined) ?? 12;
  const persona = {
    persona: scenario.persona as string,
    goal: scenario.goal as string,
    facts: scenario.facts as Record<string, string> | undefined,
  };
  return async (conversation) => {
    if (conversation.filter((u) => u.by === "caller").length >= maxTurns) return { endCall: true };
    return nextCallerMove(deps.config, persona, [...conversation]);
  };
}

async function placeCall(
  deps: TestRunDeps,
  resultId: string,
  secret: string,
  scenario: RunScenario,
  modality: Modality,
) {
  const url = new URL("/v1/calls", deps.config.testing.bridgeUrl.replace(/^http/, "ws"));
  url.searchParams.set("testResultId", resultId);
  url.searchParams.set("testSecret", secret);
  const next = stepsOf(deps, scenario);
  let providerError: string | null = null;
  const outcome = await placeTestCall({
    url: url.toString(),
    audio: modality === "audio" ? deps.config : undefined,
    variables: scenario.variables as Record<string, string> | undefined,
    maxDurationMs: ((scenario.maxDurationSeconds as number | undefined) ?? 300) * 1000,
    nextStep: async (conversation) => {
      try {
        return await next(conversation);
      } catch (error) {
        // the simulator's provider is down: the call ends and the result is an error, never a pass
        providerError = `the simulated caller could not answer: ${(error as Error).message}`;
        return { endCall: true };
      }
    },
  });
  return { ...outcome, error: outcome.error ?? providerError };
}

/** The agent task of the call once it has concluded (its end reason and analysis are then final). */
async function concludedTask(db: Db, callId: string, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [task] = await db
      .select({
        id: agentTasks.id,
        status: agentTasks.status,
        endedReason: agentTasks.endedReason,
        analysis: agentTasks.analysis,
      })
      .from(agentTasks)
      .where(eq(agentTasks.callId, callId));
    if (task && (task.status === "completed" || task.status === "failed")) return task;
    if (Date.now() > until) return task ?? null;
    // the bridge concludes a call within tens of ms of its `ended`: a 200 ms step cost each result
    // ~200 ms (bench/test-runs); a lookup by call id is cheap enough to repeat every 25 ms
    await new Promise((r) => setTimeout(r, 25));
  }
}

function observedToolCalls(outcome: TestCallOutcome, scenario: RunScenario): ObservedToolCall[] {
  const mocks = (scenario.toolMocks as ToolMock[] | undefined) ?? [];
  const live = scenario.toolPolicy === "live";
  return outcome.toolCalls.map((call) => ({
    tool: call.name,
    arguments: call.arguments,
    output: call.output ?? "",
    source: matchMock(mocks, call.name, call.arguments) ? "mock" : live ? "live" : "unmocked",
  }));
}

async function storeOutcome(
  deps: TestRunDeps,
  { resultId, secret }: { resultId: string; secret: string },
  modality: Modality,
  scenario: RunScenario,
  outcome: TestCallOutcome,
): Promise<ResultStatus> {
  const task = outcome.callId ? await concludedTask(deps.db, outcome.callId) : null;
  const call: ObservedCall = {
    utterances: outcome.utterances,
    toolCalls: observedToolCalls(outcome, scenario),
    endedReason: task?.endedReason ?? null,
    analysis: (task?.analysis as { data: unknown } | null | undefined) ?? null,
    firstAudioMs: modality === "audio" ? outcome.firstAudioMs : null,
  };
  const criteria = scenario.criteria as Criterion[];
  let error = outcome.error ?? (task ? null : "the call left no agent task");
  let judged: JudgeVerdicts | null = null;
  const questions = criteria.flatMap((c) => (c.type === "judge" ? [{ name: c.name, question: c.question }] : []));
  if (!error && questions.length) judged = await judgeCall(deps.config, call, questions);
  const verdicts = evaluateCriteria(criteria, call, modality, judged);
  const status: ResultStatus = error ? "error" : resultStatus(verdicts);
  if (status === "error" && !error)
    error =
      verdicts.find((v) => v.required && (v.verdict === "error" || v.verdict === "notApplicable"))?.reason ?? null;
  const samples = call.firstAudioMs ?? [];
  const [stored] = await deps.db
    .update(testResults)
    .set({
      status,
      criteria: verdicts,
      agentTaskId: task?.id ?? null,
      error,
      transcript: call.utterances,
      metrics: {
        turns: outcome.turns,
        durationMs: outcome.durationMs,
        firstAudioMs: samples.length ? { p50: percentile(samples, 0.5), p95: percentile(samples, 0.95) } : null,
      },
      endedAt: new Date(),
    })
    // only the attempt whose secret the result holds decides it: an attempt Temporal gave up on (its
    // worker stalled past the heartbeat time-out, then woke) must not overwrite its successor's verdict
    .where(
      and(
        eq(testResults.id, resultId),
        eq(testResults.callSecretHash, sha256(secret)),
        eq(testResults.status, "running"),
      ),
    )
    .returning({ id: testResults.id });
  if (!stored) {
    log.warn("test result of a superseded attempt dropped", { resultId, status });
    return status;
  }
  log.info("test result", { resultId, status, turns: outcome.turns, durationMs: outcome.durationMs });
  return status;
}
