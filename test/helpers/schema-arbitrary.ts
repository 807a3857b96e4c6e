// Values generated from the OpenAPI document's own JSON Schemas (fast-check arbitraries), and Ajv's
// word on whether a value is valid per the document: the two halves of a schema-driven fuzz. The
// generator follows the keywords the document uses ($ref, const, enum, oneOf/anyOf, "exactly one of"
// groups, object/array/string/number bounds, pattern, formats, contentSchema); Ajv is the judge, so a
// value the generator got wrong is never counted as valid.
import Ajv2020 from "ajv/dist/2020";
import fc from "fast-check";

type Schema = Record<string, any>;
/** A generator for a value at `path` (property names) that stands for something the schema cannot say. */
export type Hint = (path: string[], schema: Schema) => fc.Arbitrary<unknown> | undefined;

// bounds that keep bodies small: the schemas' own limits apply beneath them
const MAX_ITEMS = 3;
const MAX_STRING = 40;
const RFC3339 = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function schemaJudge(doc: Schema) {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  ajv.addFormat("uuid", UUID);
  ajv.addFormat("date-time", (s: string) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)));
  const compiled = new Map<Schema, ReturnType<typeof ajv.compile>>();
  /** Ajv's errors for `value` against `schema` (with the document's components), or null when valid. */
  return (schema: Schema, value: unknown): string | null => {
    const validate = compiled.get(schema) ?? ajv.compile({ ...schema, components: doc.components });
    compiled.set(schema, validate);
    return validate(value) ? null : JSON.stringify(validate.errors);
  };
}

export function arbitraryFor(doc: Schema, hint: Hint) {
  const resolve = (s: Schema): Schema =>
    typeof s.$ref === "string"
      ? resolve(
          s.$ref
            .slice(2)
            .split("/")
            .reduce((n: any, k: string) => n[k], doc),
        )
      : s;

  /** "exactly one of" groups: oneOf of bare `required` lists (src/models/documented-as.ts, withExactlyOne). */
  const exactlyOneGroups = (s: Schema): string[][] => {
    const bare = (o: Schema) =>
      Array.isArray(o.oneOf) && o.oneOf.every((b: Schema) => Object.keys(b).join() === "required");
    return [s, ...(s.allOf ?? [])].filter(bare).map((o) => o.oneOf.map((b: Schema) => b.required[0]));
  };

  const stringOf = (s: Schema, path: string[]): fc.Arbitrary<string> => {
    const [min, max] = [s.minLength ?? 0, Math.min(s.maxLength ?? MAX_STRING, MAX_STRING)];
    let arb: fc.Arbitrary<string>;
    if (s.format === "uuid") arb = fc.uuid();
    else if (s.format === "date-time")
      arb = fc
        .date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true })
        .map((d) => d.toISOString());
    else if (s.contentMediaType === "application/json" && s.contentSchema)
      arb = of(s.contentSchema, path).map((v) => JSON.stringify(v));
    else if (s.pattern) arb = fc.stringMatching(new RegExp(s.pattern));
    else arb = fc.string({ unit: "grapheme", minLength: min, maxLength: Math.max(min, max) });
    const length = (v: string) => [...v].length >= min && [...v].length <= (s.maxLength ?? Number.MAX_SAFE_INTEGER);
    return arb.filter((v) => length(v) && !(s.not?.enum ?? []).includes(v));
  };

  const objectOf = (s: Schema, path: string[]): fc.Arbitrary<unknown> => {
    const properties: Record<string, Schema> = s.properties ?? {};
    if (Object.keys(properties).length === 0) {
      const values = s.patternProperties ? Object.values<Schema>(s.patternProperties)[0]! : {};
      const maxKeys = Math.min(s.maxProperties ?? MAX_ITEMS, MAX_ITEMS);
      return fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), of(values, [...path, "*"]), { maxKeys });
    }
    const groups = exactlyOneGroups(s);
    return fc.tuple(...groups.map((names) => fc.constantFrom(...names))).chain((chosen) => {
      const left = groups.flat().filter((n) => !chosen.includes(n));
      const names = Object.keys(properties).filter((n) => !left.includes(n));
      const model = Object.fromEntries(names.map((n) => [n, of(properties[n]!, [...path, n])]));
      const requiredKeys = [...(s.required ?? []), ...chosen].filter((n) => names.includes(n));
      return fc.record(model, { requiredKeys });
    });
  };

  const of = (schema: Schema, path: string[]): fc.Arbitrary<unknown> => {
    const s = resolve(schema);
    const hinted = hint(path, s);
    if (hinted) return hinted;
    if (s.const !== undefined) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
    const branches = s.anyOf ?? (s.type === undefined ? s.oneOf : undefined);
    if (Array.isArray(branches)) return fc.oneof(...branches.map((b: Schema) => of(b, path)));
    switch (s.type) {
      case "null":
        return fc.constant(null);
      case "boolean":
        return fc.boolean();
      case "integer":
        return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 });
      case "number":
        return fc.double({ min: s.minimum ?? -1000, max: s.maximum ?? 1000, noNaN: true, noDefaultInfinity: true });
      case "string":
        return stringOf(s, path);
      case "array": {
        const items = of(s.items ?? {}, path);
        const constraints = { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? MAX_ITEMS, MAX_ITEMS) };
        return s.uniqueItems
          ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) })
          : fc.array(items, constraints);
      }
      case "object":
        return objectOf(s, path);
      default:
        // a value of no declared type (a mock's output, analysis' equals): any small JSON
        return fc.jsonValue({ maxDepth: 2 });
    }
  };
  return (schema: Schema) => of(schema, []);
}
