// A body validated in two steps (a loose schema, then a per-type check in the service that names every
// field) is documented as what that check accepts: one shape per value of a discriminator property.
// The OpenAPI post-processing (src/api/openapi-document.ts) puts the shapes into components.schemas
// and the oneOf in place of the loose schema; validation never reads this keyword.
import type { TSchema } from "elysia";

export const DOCUMENTED_AS = "x-documented-as";

export type DocumentedAs = {
  oneOf: { $ref: string }[];
  discriminator?: { propertyName: string; mapping: Record<string, string> };
  "x-components": Record<string, TSchema>;
};

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
  const ref = (value: string) => `#/components/schemas/${name(value)}`;
  const all = other ? { ...shapes, other } : shapes;
  const values = Object.keys(all);
  return {
    oneOf: values.map((v) => ({ $ref: ref(v) })),
    ...(!other && { discriminator: { propertyName, mapping: Object.fromEntries(values.map((v) => [v, ref(v)])) } }),
    "x-components": Object.fromEntries(values.map((v) => [name(v), all[v]!])),
  };
}
