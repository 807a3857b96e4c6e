// From criteria to a result, from results to a scenario's verdict, from those to the run's
// (design.md, "Runs"): an error is never a pass and never a fail.
import type { CriterionResult } from "./criteria";

export type ResultStatus = "passed" | "failed" | "error";
export type Verdict = "passed" | "failed" | "flaky" | "error";

/** A result passes when every required criterion passes; one that could not be decided makes it an error. */
export function resultStatus(criteria: readonly CriterionResult[]): ResultStatus {
  const required = criteria.filter((c) => c.required);
  if (required.some((c) => c.verdict === "error" || c.verdict === "notApplicable")) return "error";
  return required.every((c) => c.verdict === "pass") ? "passed" : "failed";
}

/** Over a scenario's iterations that did not error: all passed, all failed, or some of each (flaky). */
export function scenarioVerdict(statuses: readonly ResultStatus[]): Verdict {
  const decided = statuses.filter((s) => s !== "error");
  if (decided.length === 0) return "error";
  if (decided.every((s) => s === "passed")) return "passed";
  if (decided.every((s) => s === "failed")) return "failed";
  return "flaky";
}

export function runVerdict(scenarios: readonly Verdict[]): Verdict {
  for (const verdict of ["failed", "flaky", "error"] as const) if (scenarios.includes(verdict)) return verdict;
  return "passed";
}

/** The run's verdict from its results, grouped per scenario (inline scenarios by name). */
export function verdictOfResults(results: readonly { scenarioKey: string; status: ResultStatus }[]): Verdict {
  const byScenario = new Map<string, ResultStatus[]>();
  for (const r of results) byScenario.set(r.scenarioKey, [...(byScenario.get(r.scenarioKey) ?? []), r.status]);
  return runVerdict([...byScenario.values()].map(scenarioVerdict));
}

/** The first failed required criterion: what a report shows as the reason a result failed. */
export const firstFailure = (criteria: readonly CriterionResult[]) =>
  criteria.find((c) => c.required && c.verdict === "fail");
