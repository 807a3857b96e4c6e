// A body validated in two steps (a loose schema, then a per-type check in the service that names every
// field) is documented as what that check accepts: one shape per value of a discriminator property.
// The OpenAPI post-processing (src/api/openapi-document.ts) puts the shapes into components.schemas
// and the oneOf in place of the loose schema; validation never reads this keyword.
import type { TSchema } from "elysia";

export const DOCUMENTED_AS = "x-documented-as";

export type DocumentedAs = {
  oneOf: { $ref: string }[];
  discriminator: { propertyName: string; mapping: Record<string, string> };
  "x-components": Record<string, TSchema>;
};

/** `shapes` by discriminator value; each becomes components.schemas[`${prefix}${Value}`]. */
export function oneShapePer(propertyName: string, prefix: string, shapes: Record<string, TSchema>): DocumentedAs {
  const name = (value: string) =>
    prefix + value.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase()).replace(/\W/g, "");
  const ref = (value: string) => `#/components/schemas/${name(value)}`;
  const values = Object.keys(shapes);
  return {
    oneOf: values.map((v) => ({ $ref: ref(v) })),
    discriminator: { propertyName, mapping: Object.fromEntries(values.map((v) => [v, ref(v)])) },
    "x-components": Object.fromEntries(values.map((v) => [name(v), shapes[v]!])),
  };
}
