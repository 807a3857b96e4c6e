// A test call (the worker's, for a test run's result) presents its result's id and the one-time secret
// the worker stored a hash of, instead of an API token: it reaches exactly the run's target, only while
// the result runs, and its scenario decides variables, tool mocks and the tool policy.
import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { testResults, testRuns } from "../db/schema";
import { notFound, unauthorized } from "../errors";
import { isUuid } from "../lib/uuid";
import { loadCallAssistant, type CallAssistant } from "../calls/load-assistant";
import type { TestCallSetup } from "../calls/test-call-tools";
import type { ToolMock } from "../testing/tool-mocks";

export async function authorizeTestCall(
  db: Db,
  resultId: string,
  secret: string,
): Promise<{ assistant: CallAssistant; test: TestCallSetup }> {
  if (!isUuid(resultId)) throw unauthorized("unknown test call");
  const hash = createHash("sha256").update(secret).digest("hex");
  const [found] = await db
    .select({ position: testResults.position, run: testRuns })
    .from(testResults)
    .innerJoin(testRuns, eq(testRuns.id, testResults.runId))
    .where(
      and(
        eq(testResults.id, resultId),
        eq(testResults.callSecretHash, hash),
        eq(testResults.status, "running"),
        eq(testRuns.status, "running"),
      ),
    );
  if (!found) throw unauthorized("unknown test call");
  const { run } = found;
  const assistant = await loadCallAssistant(db, run.targetKind, run.assistantId);
  if (!assistant) throw notFound(run.targetKind);
  const scenario = run.scenarios[found.position]!;
  return {
    assistant,
    test: {
      runId: run.id,
      resultId,
      variables: (scenario.variables as Record<string, string> | undefined) ?? {},
      toolMocks: (scenario.toolMocks as ToolMock[] | undefined) ?? [],
      toolPolicy: scenario.toolPolicy === "live" ? "live" : "mock",
      maxCallMs: ((scenario.maxDurationSeconds as number | undefined) ?? 300) * 1000,
    },
  };
}
