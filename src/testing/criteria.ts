// The verdict of each criterion on what a test call left (design.md's criterion table). The judge's
// criteria come from the judge; every other type is decided here, the same way on every run.
import type { Criterion } from "../models/testing";
import { compileUtterancePattern } from "../models/utterance-pattern";
import type { ObservedCall } from "./observed-call";
import { atPointer, deepEqual, isSubset } from "./subset";
import { percentile } from "../lib/percentile";

export type CriterionVerdict = "pass" | "fail" | "notApplicable" | "error";
export type CriterionResult = {
  name: string;
  type: Criterion["type"];
  required: boolean;
  verdict: CriterionVerdict;
  reason: string;
};
export type Modality = "text" | "audio";

/** The judge's answer per criterion name, or why there is none (it failed twice, its provider is down). */
export type JudgeVerdicts = Map<string, { verdict: "pass" | "fail"; reason: string }> | { error: string };

/** Criteria that mean nothing in a modality: a required one makes the run a 400, never a silent pass. */
export const appliesIn = (criterion: Pick<Criterion, "type">, modality: Modality) =>
  criterion.type !== "latency" || modality === "audio";

export function evaluateCriteria(
  criteria: readonly Criterion[],
  call: ObservedCall,
  modality: Modality,
  judge: JudgeVerdicts | null,
): CriterionResult[] {
  return criteria.map((criterion) => {
    const base = { name: criterion.name, type: criterion.type, required: criterion.required ?? true };
    if (!appliesIn(criterion, modality))
      return { ...base, verdict: "notApplicable", reason: `only measured in audio runs, this one is ${modality}` };
    return { ...base, ...decide(criterion, call, judge) };
  });
}

const pass = (reason: string) => ({ verdict: "pass" as const, reason });
const fail = (reason: string) => ({ verdict: "fail" as const, reason });
const verdict = (ok: boolean, yes: string, no: string) => (ok ? pass(yes) : fail(no));

function decide(
  c: Criterion,
  call: ObservedCall,
  judge: JudgeVerdicts | null,
): { verdict: CriterionVerdict; reason: string } {
  switch (c.type) {
    case "judge": {
      if (judge === null) return { verdict: "error", reason: "the judge was not asked" };
      if (!(judge instanceof Map)) return { verdict: "error", reason: judge.error };
      return judge.get(c.name) ?? { verdict: "error", reason: "the judge's answer did not name this criterion" };
    }
    case "toolCalled": {
      const times = call.toolCalls.filter((t) => t.tool === c.tool && isSubset(c.arguments ?? {}, t.arguments)).length;
      const min = c.minTimes ?? 1;
      const ok = times >= min && (c.maxTimes === undefined || times <= c.maxTimes);
      const wanted = c.maxTimes === undefined ? `at least ${min}` : `${min} to ${c.maxTimes}`;
      return verdict(ok, `${c.tool} called ${times} time(s)`, `${c.tool} called ${times} time(s), wanted ${wanted}`);
    }
    case "toolNotCalled": {
      const times = call.toolCalls.filter((t) => t.tool === c.tool).length;
      return verdict(times === 0, `${c.tool} never called`, `${c.tool} called ${times} time(s)`);
    }
    case "said":
    case "notSaid": {
      // a scenario stored before patterns were RE2 may hold one RE2 refuses
      const compiled = compileUtterancePattern(c.pattern);
      if (!compiled.ok) return { verdict: "error", reason: compiled.message };
      const match = call.utterances.find((u) => u.by === c.by && compiled.pattern.test(u.text));
      const found = match ? `the ${c.by} said "${clip(match.text)}"` : `no ${c.by} utterance matches /${c.pattern}/i`;
      return verdict(c.type === "said" ? match !== undefined : match === undefined, found, found);
    }
    case "endedReason":
      return verdict(
        call.endedReason !== null && c.in.includes(call.endedReason),
        `ended ${call.endedReason}`,
        `ended ${call.endedReason ?? "without a reason"}, wanted ${c.in.join(" or ")}`,
      );
    case "analysis": {
      if (call.analysis === null) return fail("the call has no analysis");
      const value = atPointer(call.analysis.data, c.path);
      const shown = value === undefined ? "nothing" : JSON.stringify(value);
      return verdict(
        deepEqual(value, c.equals),
        `${c.path || "/"} is ${shown}`,
        `${c.path || "/"} is ${shown}, wanted ${JSON.stringify(c.equals)}`,
      );
    }
    case "latency": {
      const samples = call.firstAudioMs ?? [];
      if (samples.length === 0) return { verdict: "error", reason: "no turn was measured" };
      const p95 = percentile(samples, 0.95);
      return verdict(p95 <= c.p95MaxMs, `p95 ${p95} ms`, `p95 ${p95} ms, over ${c.p95MaxMs} ms`);
    }
    case "noUnmockedTools": {
      const unmocked = call.toolCalls.filter((t) => t.source === "unmocked").map((t) => t.tool);
      return verdict(
        unmocked.length === 0,
        "every tool call was mocked",
        `unmocked: ${[...new Set(unmocked)].join(", ")}`,
      );
    }
  }
}

const clip = (text: string) => (text.length > 120 ? `${text.slice(0, 117)}...` : text);
