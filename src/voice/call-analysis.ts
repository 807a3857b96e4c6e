// The call_analysis extension: what the post-call request asks for beside the summary, and how its
// answer is checked (data against the configured JSON Schema).
import type { ValidateFunction } from "ajv";
import { compileAnalysisSchema, validationMessage } from "../models/analysis-schema";

export type AnalysisPlan = {
  schema: string;
  validate: ValidateFunction;
  prompt?: string;
  successCriteria?: string;
};

/** What a call's analysis holds: `data` null with `error` when no valid answer came. */
export type CallAnalysis = {
  data: unknown;
  success: boolean | null;
  successReason: string | null;
  error?: string;
};

/** The assistant's call_analysis extension (the first one), or null; a stored schema that no longer compiles counts as none. */
export function analysisPlanOf(
  extensions: { type: string; parameters: Record<string, unknown> }[],
): AnalysisPlan | null {
  const ext = extensions.find((e) => e.type === "call_analysis");
  if (!ext || typeof ext.parameters.schema !== "string") return null;
  const compiled = compileAnalysisSchema(ext.parameters.schema);
  if (!compiled.ok) return null;
  const text = (v: unknown) => (typeof v === "string" && v.trim() ? v : undefined);
  return {
    schema: ext.parameters.schema,
    validate: compiled.validate,
    prompt: text(ext.parameters.prompt),
    successCriteria: text(ext.parameters.successCriteria),
  };
}

/** The instructions added to the summary's system prompt. */
export function analysisInstructions(plan: AnalysisPlan): string {
  return [
    'Also include "analysis": {"data": ..., "success": boolean, "successReason": string}.',
    `"data" must be valid against this JSON Schema: ${plan.schema}`,
    plan.prompt ? `How to fill "data": ${plan.prompt}` : "",
    `"success" says whether the call succeeded${plan.successCriteria ? ` by these criteria: ${plan.successCriteria}` : ""}; "successReason" says why in one sentence.`,
  ]
    .filter(Boolean)
    .join(" ");
}

export type CheckedAnalysis = { ok: true; analysis: CallAnalysis } | { ok: false; message: string };

/** The model's `analysis` field checked: data against the schema, success a boolean. */
export function checkAnalysis(plan: AnalysisPlan, answer: unknown): CheckedAnalysis {
  if (answer === null || typeof answer !== "object") return { ok: false, message: "analysis is missing" };
  const { data, success, successReason } = answer as Record<string, unknown>;
  if (!plan.validate(data)) return { ok: false, message: validationMessage(plan.validate) };
  return {
    ok: true,
    analysis: {
      data,
      success: typeof success === "boolean" ? success : null,
      successReason: typeof successReason === "string" && successReason.trim() ? successReason.trim() : null,
    },
  };
}

export const failedAnalysis = (error: string): CallAnalysis => ({
  data: null,
  success: null,
  successReason: null,
  error,
});
