// A call_analysis extension's `schema`: a JSON Schema (as a string) for the data the analysis fills.
// Ajv, a maintained validator, both checks the schema itself and validates the model's answers.
import Ajv, { type ValidateFunction } from "ajv";

export type AnalysisSchemaResult = { ok: true; validate: ValidateFunction } | { ok: false; message: string };

// strict: false: a schema may carry keywords Ajv does not know (examples, titles of other drafts)
const ajv = new Ajv({ allErrors: true, strict: false });

/** The schema compiled, or why it is not a JSON Schema. */
export function compileAnalysisSchema(json: string): AnalysisSchemaResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { ok: false, message: "must be JSON" };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    return { ok: false, message: "must be a JSON Schema object" };
  try {
    return { ok: true, validate: ajv.compile(parsed) };
  } catch (error) {
    return { ok: false, message: `not a JSON Schema: ${(error as Error).message}` };
  }
}

/** Ajv's errors as one line, for the retry prompt and the analysis error. */
export const validationMessage = (validate: ValidateFunction) => ajv.errorsText(validate.errors, { dataVar: "data" });
