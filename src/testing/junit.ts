// A run's results as JUnit XML, the format CI systems read: a testcase per scenario and iteration.
import type { CriterionResult } from "./criteria";
import type { ResultStatus } from "./verdicts";
import { firstFailure } from "./verdicts";

export type JunitResult = {
  scenarioName: string;
  iteration: number;
  status: ResultStatus;
  criteria: CriterionResult[];
  error: string | null;
  durationMs: number | null;
  transcript: string;
};

export function junitXml(run: { id: string; name: string }, results: readonly JunitResult[]): string {
  const failures = results.filter((r) => r.status === "failed").length;
  const errors = results.filter((r) => r.status === "error").length;
  const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);
  const total = results.reduce((sum, r) => sum + (r.durationMs ?? 0), 0);
  const cases = results.map((r) => {
    const name = `${r.scenarioName} #${r.iteration}`;
    const open = `  <testcase classname="${attr(run.name)}" name="${attr(name)}" time="${seconds(r.durationMs)}">`;
    const failed = firstFailure(r.criteria);
    const body = [
      r.status === "failed" && failed
        ? `    <failure message="${attr(`${failed.name}: ${failed.reason}`)}" type="${attr(failed.type)}"/>`
        : null,
      r.status === "error"
        ? `    <error message="${attr(r.error ?? "the call or the judge could not complete")}"/>`
        : null,
      `    <system-out>${text(r.transcript)}</system-out>`,
    ].filter((line) => line !== null);
    return [open, ...body, "  </testcase>"].join("\n");
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuite name="${attr(run.name)}" id="${attr(run.id)}" tests="${results.length}" failures="${failures}" errors="${errors}" time="${seconds(total)}">`,
    ...cases,
    "</testsuite>",
    "",
  ].join("\n");
}

// XML 1.0 has no escape for most control characters: they are dropped
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly what XML cannot carry
const invalidXml = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const text = (s: string) =>
  s.replace(invalidXml, "").replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const attr = (s: string) => text(s).replaceAll('"', "&quot;").replaceAll("\n", "&#10;");
