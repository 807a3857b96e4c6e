// Test scenarios and suites (design.md, "Scenarios and suites"). The body is checked in two steps: the
// schema below (shapes and ranges, what OpenAPI shows), then scenarioErrors (what depends on `kind` and
// on each criterion's `type`), so that every message names its field.
import { t, type Static, type TSchema } from "elysia";
import type { TObject } from "@sinclair/typebox";
import { endedReasons, testModalities, testRunStatuses, testScenarioKinds, testVerdicts } from "../db/schema";
import { schemaErrors, type FieldError } from "../errors";
import { CallVariables } from "./calls";
import { Enum, Integer, NonEmpty, Nullable, OptionalNullable, Strict, Uuid } from "./common";
import { documentedAs, oneShapePer, withExactlyOne } from "./documented-as";
import { compileUtterancePattern } from "./utterance-pattern";

export const criterionTypes = [
  "judge",
  "toolCalled",
  "toolNotCalled",
  "said",
  "notSaid",
  "endedReason",
  "analysis",
  "latency",
  "noUnmockedTools",
] as const;
export type CriterionType = (typeof criterionTypes)[number];
export const toolPolicies = ["mock", "live"] as const;

const Text = (maxLength: number, description?: string) => t.String({ minLength: 1, maxLength, description });
const ToolName = NonEmpty(64);
const Arguments = t.Record(t.String(), t.Unknown(), { description: "matched as a subset of the call's arguments" });

const Turn = t.Union([
  t.Object({ say: Text(2000, "what the caller says") }, Strict),
  t.Object({ silenceMs: Integer({ minimum: 100, maximum: 30_000, description: "the caller stays silent" }) }, Strict),
]);

const ToolMock = t.Object(
  {
    tool: ToolName,
    arguments: t.Optional(Arguments),
    output: t.Unknown({ description: "a string, or JSON sent as its text" }),
    delayMs: t.Optional(Integer({ minimum: 0, maximum: 30_000 })),
  },
  Strict,
);

const by = Enum(["agent", "caller"]);
const UtterancePattern = Text(
  500,
  "case-insensitive regular expression in RE2 syntax (no backreferences or lookaround)",
);
/** Each criterion type's own fields (the table in design.md). */
const criterionFields = {
  judge: { question: Text(2000, "asked of the judge about the whole call") },
  toolCalled: {
    tool: ToolName,
    arguments: t.Optional(Arguments),
    minTimes: t.Optional(Integer({ minimum: 0, maximum: 100, description: "default 1" })),
    maxTimes: t.Optional(Integer({ minimum: 0, maximum: 100, description: "at least minTimes" })),
  },
  toolNotCalled: { tool: ToolName },
  said: { pattern: UtterancePattern, by },
  notSaid: { pattern: UtterancePattern, by },
  endedReason: { in: t.Array(Enum(endedReasons), { minItems: 1, maxItems: endedReasons.length }) },
  analysis: {
    path: t.String({ maxLength: 500, pattern: "^(/.*)?$", description: "JSON Pointer into analysis.data" }),
    equals: t.Unknown(),
  },
  latency: { p95MaxMs: Integer({ minimum: 1, maximum: 60_000 }) },
  noUnmockedTools: {},
} satisfies Record<CriterionType, object>;
type CriterionFields = typeof criterionFields;
/** A stored criterion, its type's fields included (scenarioErrors checked them). */
export type Criterion = {
  [K in CriterionType]: Static<TObject<CriterionFields[K]>> & { type: K; name: string; required?: boolean };
}[CriterionType];
const criterionName = NonEmpty(200);
const criterionRequired = t.Optional(t.Boolean({ description: "default true" }));
/** Each criterion type's whole schema (also what the console's criterion forms are built from). */
export const criterionSchemas = Object.fromEntries(
  Object.entries(criterionFields).map(([type, fields]) => [
    type,
    t.Object({ name: criterionName, type: t.Literal(type), required: criterionRequired, ...fields }, Strict),
  ]),
) as unknown as Record<CriterionType, TSchema>;

// checked loosely here, then by scenarioErrors against the type's own schema, which names every field
const Criterion = documentedAs(
  t.Object(
    { name: criterionName, type: Enum(criterionTypes), required: criterionRequired },
    {
      additionalProperties: true,
      description: `one of the types ${criterionTypes.join(", ")}, with that type's fields (docs/testing-assistants.md)`,
    },
  ),
  oneShapePer("type", "Criterion", criterionSchemas),
);

/** The fields only one kind of scenario has. */
const kindFields = {
  scripted: { turns: t.Array(Turn, { minItems: 1, maxItems: 50, description: "what the caller does, in order" }) },
  simulated: {
    persona: Text(4000, "who the caller is and how they talk"),
    goal: Text(4000, "what the caller wants"),
    facts: t.Optional(
      t.Record(t.String({ maxLength: 100 }), t.String({ maxLength: 1000 }), {
        maxProperties: 50,
        description: "what the caller knows and gives when asked",
      }),
    ),
    maxTurns: t.Optional(Integer({ minimum: 1, maximum: 50, description: "default 12" })),
  },
} satisfies Record<(typeof testScenarioKinds)[number], object>;
const { scripted, simulated } = kindFields;
const scenarioHead = {
  name: NonEmpty(200),
  description: OptionalNullable(t.String({ maxLength: 2000 })),
  tags: t.Optional(t.Array(NonEmpty(100), { maxItems: 20 })),
};
const scenarioCommon = {
  variables: t.Optional(CallVariables),
  maxDurationSeconds: t.Optional(Integer({ minimum: 10, maximum: 900, description: "default 300" })),
  toolMocks: t.Optional(t.Array(ToolMock, { maxItems: 50 })),
  toolPolicy: t.Optional(Enum(toolPolicies, { description: "default mock" })),
  criteria: t.Array(Criterion, { minItems: 1, maxItems: 30, description: "each with a name of its own" }),
};

// checked loosely here (a union would not name the field), then by scenarioErrors by kind
const scenarioWrite = documentedAs(
  t.Object(
    {
      ...scenarioHead,
      kind: Enum(testScenarioKinds),
      turns: t.Optional(scripted.turns),
      persona: t.Optional(simulated.persona),
      goal: t.Optional(simulated.goal),
      facts: simulated.facts,
      maxTurns: simulated.maxTurns,
      ...scenarioCommon,
    },
    Strict,
  ),
  oneShapePer(
    "kind",
    "Scenario",
    Object.fromEntries(
      testScenarioKinds.map((kind) => [
        kind,
        t.Object({ ...scenarioHead, kind: t.Literal(kind), ...kindFields[kind], ...scenarioCommon }, Strict),
      ]),
    ),
  ),
);
export type ScenarioInput = typeof scenarioWrite.static;

const { name: _n, description: _d, tags: _t, kind: _k, ...definitionFields } = scenarioWrite.properties;
const scenarioOut = t.Object({
  id: Uuid,
  name: t.String(),
  description: Nullable(t.String()),
  tags: t.Array(t.String()),
  kind: Enum(testScenarioKinds),
  ...definitionFields,
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});

export const ScenarioModel = { create: scenarioWrite, update: scenarioWrite, out: scenarioOut };

const suiteWrite = t.Object(
  {
    name: NonEmpty(200),
    // suites.ts names a repeated id itself ("named twice"), where uniqueItems would name only the array
    scenarioIds: documentedAs(
      t.Array(Uuid, { minItems: 1, maxItems: 200, description: "the suite's scenarios, in order" }),
      {
        type: "array",
        items: Uuid,
        minItems: 1,
        maxItems: 200,
        uniqueItems: true,
        description: "the suite's scenarios, in order, each once",
      },
    ),
    repeat: t.Optional(Integer({ minimum: 1, maximum: 10, description: "default 1" })),
  },
  Strict,
);
export type SuiteInput = typeof suiteWrite.static;
export const SuiteModel = {
  create: suiteWrite,
  update: suiteWrite,
  out: t.Object({
    id: Uuid,
    name: t.String(),
    scenarioIds: t.Array(Uuid),
    repeat: Integer(),
    createdAt: t.String({ format: "date-time" }),
    updatedAt: t.String({ format: "date-time" }),
  }),
};

const onlyFor: Record<string, (typeof testScenarioKinds)[number]> = {
  turns: "scripted",
  persona: "simulated",
  goal: "simulated",
  facts: "simulated",
  maxTurns: "simulated",
};

/** What the schema cannot say: fields that belong to the other kind, each criterion's own fields. */
export function scenarioErrors(input: ScenarioInput): FieldError[] {
  const errors: FieldError[] = [];
  for (const [field, kind] of Object.entries(onlyFor))
    if (input[field as keyof ScenarioInput] !== undefined && kind !== input.kind)
      errors.push({ field, message: `only a ${kind} scenario has ${field}` });
  const required = input.kind === "scripted" ? ["turns"] : ["persona", "goal"];
  for (const field of required)
    if (input[field as keyof ScenarioInput] === undefined)
      errors.push({ field, message: `required for a ${input.kind} scenario` });
  const names = new Set<string>();
  input.criteria.forEach((criterion, i) => {
    errors.push(...criterionErrors(criterion as Record<string, unknown>, `criteria[${i}]`));
    if (names.has(criterion.name))
      errors.push({ field: `criteria[${i}].name`, message: "another criterion of the scenario has this name" });
    names.add(criterion.name);
  });
  return errors;
}

function criterionErrors(criterion: Record<string, unknown>, field: string): FieldError[] {
  const type = criterion.type as CriterionType;
  const errors = schemaErrors(criterionSchemas[type], criterion, field);
  if (errors.length) return errors;
  if (type === "said" || type === "notSaid") {
    const compiled = compileUtterancePattern(criterion.pattern as string);
    if (!compiled.ok) errors.push({ field: `${field}.pattern`, message: compiled.message });
  }
  const { minTimes = 1, maxTimes } = criterion as { minTimes?: number; maxTimes?: number };
  if (type === "toolCalled" && maxTimes !== undefined && maxTimes < minTimes)
    errors.push({ field: `${field}.maxTimes`, message: `must be at least minTimes (${minTimes})` });
  return errors;
}

const runWrite = withExactlyOne(
  t.Object(
    {
      assistantId: t.Optional(Uuid),
      agentId: t.Optional(Uuid),
      suiteId: t.Optional(Uuid),
      scenarioIds: t.Optional(t.Array(Uuid, { minItems: 1, maxItems: 200 })),
      scenarios: t.Optional(
        t.Array(scenarioWrite, {
          minItems: 1,
          maxItems: 200,
          description: "inline scenarios, not stored: tests as code",
        }),
      ),
      modality: t.Optional(Enum(testModalities, { description: "default text" })),
      repeat: t.Optional(Integer({ minimum: 1, maximum: 10, description: "overrides the suite's" })),
      concurrency: t.Optional(Integer({ minimum: 1, maximum: 20, description: "default 4" })),
      labels: t.Optional(
        t.Record(t.String({ maxLength: 100 }), t.String({ maxLength: 500 }), {
          maxProperties: 20,
          description: "free-form, e.g. the commit under test",
        }),
      ),
    },
    Strict,
  ),
  ["assistantId", "agentId"],
  ["suiteId", "scenarioIds", "scenarios"],
);
export type RunInput = typeof runWrite.static;

const Timestamp = t.String({ format: "date-time" });
export const RunModel = {
  create: runWrite,
  out: t.Object({
    id: Uuid,
    assistantId: Nullable(Uuid),
    agentId: Nullable(Uuid),
    suiteId: Nullable(Uuid),
    modality: Enum(testModalities),
    concurrency: Integer(),
    status: Enum(testRunStatuses),
    verdict: Nullable(Enum(testVerdicts)),
    counts: t.Object({ total: Integer(), passed: Integer(), failed: Integer(), error: Integer(), pending: Integer() }),
    labels: t.Record(t.String(), t.String()),
    createdAt: Timestamp,
    startedAt: Nullable(Timestamp),
    endedAt: Nullable(Timestamp),
  }),
};

export const ResultOut = t.Object({
  id: Uuid,
  scenarioId: Nullable(Uuid),
  scenarioName: t.String(),
  iteration: Integer({ minimum: 1 }),
  status: Enum(["passed", "failed", "error"]),
  criteria: t.Array(
    t.Object({
      name: t.String(),
      type: Enum(criterionTypes),
      required: t.Boolean(),
      verdict: Enum(["pass", "fail", "notApplicable", "error"]),
      reason: t.String(),
    }),
  ),
  agentTaskId: Nullable(Uuid),
  metrics: Nullable(
    t.Object({
      turns: Integer(),
      durationMs: Integer(),
      firstAudioMs: Nullable(t.Object({ p50: Integer(), p95: Integer() })),
    }),
  ),
  hooks: t.Array(t.Record(t.String(), t.Unknown()), {
    description: "the call_started / call_concluded payloads captured",
  }),
  error: Nullable(t.String()),
});
