// Building blocks for request and response schemas; OpenAPI is generated from these same objects.
import { t, type TSchema } from "elysia";
import type { TLiteral, TObject, TUnion } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import { checksResponses } from "../config";
import { PATTERN_MESSAGE } from "../errors";
import { integerPattern } from "../lib/integer-pattern";

// Elysia's t.Integer also accepts numeric strings; the API wants real JSON integers.
export const Integer = (options: Parameters<typeof Type.Integer>[0] = {}) => Type.Integer(options);
// Elysia's t.UnionEnum gives an optional field a default (its first value); this one has none.
type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };
export const Enum = <const T extends readonly [string, ...string[]]>(
  values: T,
  options: { description?: string } = {},
) =>
  t.Union(
    values.map((v) => t.Literal(v)),
    options,
  ) as unknown as TUnion<Literals<T>>;
export const Uuid = t.String({ format: "uuid" });
/**
 * An RFC 3339 time a client sends (a filter's bound): "date-time" alone also passes expanded years
 * (+275760-09-12T…), which Postgres cannot hold; the year is 0001..9999.
 */
export const DateTimeIn = (description: string) =>
  t.String({
    format: "date-time",
    pattern: "^(?!0000)[0-9]{4}-",
    [PATTERN_MESSAGE]: "must be an RFC 3339 time with a year of four digits (2026-01-31T12:00:00Z)",
    description,
  });
export const Strict = { additionalProperties: false } as const;
export const Nullable = <T extends TSchema>(schema: T) => t.Union([schema, t.Null()]);
export const OptionalNullable = <T extends TSchema>(schema: T) => t.Optional(Nullable(schema));
export const HttpUrl = t.String({ pattern: "^https?://[^\\s/?#]+[^\\s]*$", maxLength: 2048 });
export const StringMap = t.Record(t.String(), t.String());
export const NonEmpty = (maxLength = 200) => t.String({ minLength: 1, maxLength });

// Responses are checked against their schemas at run time only where API_CHECK_RESPONSES=true (the test
// suite sets it): the check (formats, regular expressions) was 14 % of a cached read's CPU, and an answer
// off its schema is a bug for the tests to find, not one a production request can do anything about.
const checked = { noValidate: !checksResponses() };

const base = {
  success: t.Boolean(),
  message: t.Optional(t.String()),
  timestamp: t.String({ format: "date-time" }),
  traceId: t.Optional(t.String()),
};

export const Envelope = <T extends TSchema>(data: T) => t.Object({ ...base, data }, checked);
export const EmptyEnvelope = t.Object({ ...base, data: t.Null() }, checked);
export const PagedEnvelope = <T extends TSchema>(item: T) =>
  t.Object(
    {
      ...base,
      data: t.Array(item),
      page: Integer({ minimum: 0 }),
      size: Integer({ minimum: 1 }),
      totalElements: Integer({ minimum: 0 }),
      totalPages: Integer({ minimum: 0 }),
    },
    checked,
  );
export const ErrorEnvelope = t.Object(
  {
    ...base,
    data: t.Optional(t.Null()),
    errors: t.Optional(t.Array(t.Object({ field: t.String(), message: t.String() }))),
  },
  checked,
);

/** Error responses every authenticated route can give, for the OpenAPI document. */
export const errorResponses = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
};

/** An integer as a query string gives it: a string of digits, min..max, refused in words otherwise. */
export const DigitsBetween = (min: number, max: number, description: string) =>
  t.String({
    pattern: `^${integerPattern(min, max)}$`,
    [PATTERN_MESSAGE]: `must be an integer between ${min} and ${max}`,
    description,
  });

export const pageQueryFields = {
  page: t.Optional(
    t.String({
      pattern: "^[0-9]{1,15}$",
      [PATTERN_MESSAGE]: "must be an integer >= 0",
      description: "0-indexed page number (default 0)",
    }),
  ),
  size: t.Optional(DigitsBetween(1, 100, "items per page, 1..100 (default 20)")),
  sort: t.Optional(t.String({ description: "field,asc|desc over the resource's sortable fields (default name,asc)" })),
};
export const PageQuery = t.Object(pageQueryFields, Strict);

/** A list's query whose `sort` names one of `fields`: the whitelist parsePaging holds in the list's service. */
export function sortableBy<T extends TObject>(query: T, fields: readonly string[]): T {
  const sort = t.String({
    pattern: `^(?:${fields.join("|")})(?:,(?:[aA][sS][cC]|[dD][eE][sS][cC]))?$`,
    [PATTERN_MESSAGE]: `must be field[,asc|desc] with field one of: ${fields.join(", ")}`,
    description: `field[,asc|desc], the field one of ${fields.join(", ")}`,
  });
  return t.Object({ ...query.properties, sort: t.Optional(sort) }, Strict) as unknown as T;
}
/** page, size and sort as the query string gives them; services parse them with parsePaging. */
export type PageRequest = typeof PageQuery.static;
