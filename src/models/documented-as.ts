// A schema whose check goes further than its own keywords (a per-type check in a service that names
// every field, a rule only the runtime knows) is documented as what that check accepts: one shape per
// value of a discriminator property, or a stricter schema. The OpenAPI post-processing
// (src/api/openapi-document.ts) puts the marked schema's x-components into components.schemas and the
// rest in place of the schema; validation never reads this keyword.
import type { TSchema } from "elysia";

export const DOCUMENTED_AS = "x-documented-as";

/** A JSON Schema for the document; its `x-components` become components.schemas entries. */
export type DocumentedAs = Record<string, unknown> & { "x-components"?: Record<string, TSchema> };

/** `schema`, validated as it is, documented as `documented`. */
export function documentedAs<T extends TSchema>(schema: T, documented: DocumentedAs): T {
  return Object.assign(schema, { [DOCUMENTED_AS]: documented });
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A reference to components.schemas[name], which holds `schema` (written once in the document). */
export const named = (name: string, schema: TSchema): DocumentedAs => ({
  ...ref(name),
  "x-components": { [name]: schema },
});

/**
 * `shapes` by discriminator value; each becomes components.schemas[`${prefix}${Value}`]. `other`, when
 * the body may carry a value without a shape of its own (an extension type stored as given), becomes
 * `${prefix}Other`; the document then has no discriminator, which would refuse such a value.
 */
export function oneShapePer(
  propertyName: string,
  prefix: string,
  shapes: Record<string, TSchema>,
  other?: TSchema,
): DocumentedAs {
  const name = (value: string) =>
    prefix + value.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase()).replace(/\W/g, "");
  const all = other ? { ...shapes, other } : shapes;
  const values = Object.keys(all);
  return {
    oneOf: values.map((v) => ref(name(v))),
    ...(!other && {
      discriminator: { propertyName, mapping: Object.fromEntries(values.map((v) => [v, ref(name(v)).$ref])) },
    }),
    "x-components": Object.fromEntries(values.map((v) => [name(v), all[v]!])),
  };
}

/** Documented with "exactly one of" each group of property names, which the service checks (naming the field). */
export function withExactlyOne<T extends TSchema>(schema: T, ...groups: string[][]): T {
  const alternatives = groups.map((names) => ({ oneOf: names.map((name) => ({ required: [name] })) }));
  const documented = alternatives.length === 1 ? alternatives[0]! : { allOf: alternatives };
  return documentedAs(schema, { ...JSON.parse(JSON.stringify(schema)), ...documented });
}
