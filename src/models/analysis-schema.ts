// A call_analysis extension's `schema`: a JSON Schema (as a string) for the data the analysis fills.
// Ajv, a maintained validator, both checks the schema itself and validates the model's answers.
import Ajv, { type ValidateFunction } from "ajv";
import { isObject } from "../lib/is-object";
import { LruMap } from "../lib/lru-map";

export type AnalysisSchemaResult = { ok: true; validate: ValidateFunction } | { ok: false; message: string };

// strict: false: a schema may carry keywords Ajv does not know (examples, titles of other drafts)
const options = { allErrors: true, strict: false } as const;

// Checks schemas against the meta-schema only: validateSchema compiles the meta-schema once and
// keeps nothing of the schema it checks.
const metaAjv = new Ajv(options);

// Each distinct schema is compiled in an Ajv of its own: an Ajv keeps every `$id` it compiles in
// one registry (a second compile of the same `$id` throws, and another tenant's `$ref` would
// resolve to it) and caches by object identity (a fresh parse per call never hits). One instance
// costs about 8 KB, so the cache is bounded; a schema compiles in about 1.3 ms once validated.
export const ANALYSIS_SCHEMAS_KEPT = 1000;
const compiled = new LruMap<string, ValidateFunction>(ANALYSIS_SCHEMAS_KEPT);

/** The schema compiled (once per distinct schema), or why it is not a JSON Schema. */
export function compileAnalysisSchema(json: string): AnalysisSchemaResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { ok: false, message: "must be JSON" };
  }
  if (!isObject(parsed)) return { ok: false, message: "must be a JSON Schema object" };
  const key = canonicalJson(parsed);
  const known = compiled.get(key);
  if (known) return { ok: true, validate: known };
  try {
    if (!metaAjv.validateSchema(parsed)) return { ok: false, message: `not a JSON Schema: ${metaErrors()}` };
    const validate = new Ajv({ ...options, validateSchema: false }).compile(parsed);
    compiled.set(key, validate);
    return { ok: true, validate };
  } catch (error) {
    return { ok: false, message: `not a JSON Schema: ${(error as Error).message}` };
  }
}

/** How many compiled schemas are kept (for tests and metrics). */
export const compiledAnalysisSchemas = () => compiled.size;

/** Ajv's errors as one line, for the retry prompt and the analysis error. */
export const validationMessage = (validate: ValidateFunction) =>
  metaAjv.errorsText(validate.errors, { dataVar: "data" });

const metaErrors = () => metaAjv.errorsText(metaAjv.errors, { dataVar: "schema" });

// The same schema written with other spacing or key order is one cache entry.
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(",")}}`;
}
