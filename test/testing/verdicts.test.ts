// Criterion verdicts for every type (passing and failing), results, scenario and run verdicts, JUnit.
import { describe, expect, test } from "bun:test";
import { parseDocument } from "htmlparser2";
import { evaluateCriteria, type JudgeVerdicts } from "../../src/testing/criteria";
import { junitXml } from "../../src/testing/junit";
import type { ObservedCall } from "../../src/testing/observed-call";
import { matchMock, mockOutputText } from "../../src/testing/tool-mocks";
import { resultStatus, runVerdict, scenarioVerdict, verdictOfResults } from "../../src/testing/verdicts";
import { atPointer, isSubset } from "../../src/testing/subset";
import type { Criterion } from "../../src/models/testing";

const call: ObservedCall = {
  utterances: [
    { by: "agent", text: "Hello, Luigi's, how can I help?" },
    { by: "caller", text: "A table for two at seven, please." },
    { by: "agent", text: "Booked: a table for 2 at 7 pm." },
  ],
  toolCalls: [
    {
      tool: "book_table",
      arguments: { people: 2, time: "19:00", extra: { high_chair: false } },
      output: "ok",
      source: "mock",
    },
    { tool: "lookup_menu", arguments: {}, output: "error", source: "unmocked" },
  ],
  endedReason: "hangup",
  analysis: { data: { booked: true, party: { size: 2 } } },
  firstAudioMs: [400, 500, 650, 900],
};

const judge: JudgeVerdicts = new Map([["polite", { verdict: "pass" as const, reason: "it was" }]]);
const c = (criterion: Record<string, unknown>) => ({ name: "c", required: true, ...criterion }) as Criterion;
const verdictOf = (
  criterion: Record<string, unknown>,
  modality: "text" | "audio" = "audio",
  j: JudgeVerdicts = judge,
) => evaluateCriteria([c(criterion)], call, modality, j)[0]!.verdict;

describe("each criterion type passes and fails", () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ["judge", { type: "judge", name: "polite", question: "?" }, { type: "judge", name: "rude", question: "?" }],
    [
      "toolCalled",
      { type: "toolCalled", tool: "book_table", arguments: { people: 2, extra: {} } },
      { type: "toolCalled", tool: "book_table", arguments: { people: 3 } },
    ],
    [
      "toolCalled times",
      { type: "toolCalled", tool: "book_table", minTimes: 1, maxTimes: 1 },
      { type: "toolCalled", tool: "book_table", minTimes: 2 },
    ],
    ["toolNotCalled", { type: "toolNotCalled", tool: "transfer_call" }, { type: "toolNotCalled", tool: "book_table" }],
    [
      "said",
      { type: "said", pattern: "table for (two|2)", by: "agent" },
      { type: "said", pattern: "table for (two|2) at 7 pm", by: "caller" },
    ],
    [
      "notSaid",
      { type: "notSaid", pattern: "refund", by: "agent" },
      { type: "notSaid", pattern: "BOOKED", by: "agent" },
    ],
    ["endedReason", { type: "endedReason", in: ["hangup"] }, { type: "endedReason", in: ["transferred"] }],
    [
      "analysis",
      { type: "analysis", path: "/party/size", equals: 2 },
      { type: "analysis", path: "/party/name", equals: "x" },
    ],
    ["latency", { type: "latency", p95MaxMs: 900 }, { type: "latency", p95MaxMs: 899 }],
    ["noUnmockedTools", { type: "noUnmockedTools" }, { type: "noUnmockedTools" }],
  ];
  for (const [name, passing, failing] of cases)
    test(name, () => {
      if (name !== "noUnmockedTools") expect(verdictOf(passing)).toBe("pass");
      expect(verdictOf(failing)).toBe(name === "judge" ? "error" : "fail");
    });

  test("noUnmockedTools passes when every call was mocked", () => {
    const mocked = { ...call, toolCalls: call.toolCalls.filter((t) => t.source === "mock") };
    expect(evaluateCriteria([c({ type: "noUnmockedTools" })], mocked, "text", null)[0]!.verdict).toBe("pass");
  });

  test("latency means nothing in text; a judge that failed makes its criteria errors", () => {
    expect(verdictOf({ type: "latency", p95MaxMs: 1 }, "text")).toBe("notApplicable");
    expect(verdictOf({ type: "judge", name: "polite", question: "?" }, "text", { error: "judge down" })).toBe("error");
  });

  test("patterns are RE2: `(a+)+$` decided correctly, one RE2 refuses (stored before) an error", () => {
    const long = { ...call, utterances: [...call.utterances, { by: "caller" as const, text: `${"a".repeat(24)}b` }] };
    const verdicts = evaluateCriteria(
      [
        c({ type: "notSaid", pattern: "(a+)+$", by: "caller" }),
        c({ type: "said", pattern: "^(a+)+B", by: "caller" }),
        c({ type: "said", pattern: "table(?= for)", by: "agent" }),
      ],
      long,
      "text",
      null,
    );
    expect(verdicts.map((v) => v.verdict)).toEqual(["pass", "pass", "error"]);
    expect(verdicts[2]!.reason).toContain("RE2");
  });

  test("a failure says why", () => {
    const [result] = evaluateCriteria([c({ type: "endedReason", in: ["transferred"] })], call, "text", null);
    expect(result!.reason).toBe("ended hangup, wanted transferred");
  });
});

describe("verdicts", () => {
  const r = (verdict: string, required = true) =>
    ({ name: "x", type: "judge" as const, required, verdict, reason: "" }) as never;
  test("a result: required criteria decide; an error or a required notApplicable is never a pass", () => {
    expect(resultStatus([r("pass"), r("fail", false)])).toBe("passed");
    expect(resultStatus([r("pass"), r("fail")])).toBe("failed");
    expect(resultStatus([r("fail"), r("error")])).toBe("error");
    expect(resultStatus([r("notApplicable")])).toBe("error");
    expect(resultStatus([r("pass"), r("notApplicable", false)])).toBe("passed");
  });
  test("a scenario over its iterations, errors left out; the run's from its scenarios", () => {
    expect(scenarioVerdict(["passed", "error", "passed"])).toBe("passed");
    expect(scenarioVerdict(["failed", "failed"])).toBe("failed");
    expect(scenarioVerdict(["passed", "failed", "error"])).toBe("flaky");
    expect(scenarioVerdict(["error", "error"])).toBe("error");
    expect(runVerdict(["passed", "flaky", "failed", "error"])).toBe("failed");
    expect(runVerdict(["passed", "error", "flaky"])).toBe("flaky");
    expect(runVerdict(["passed", "error"])).toBe("error");
    expect(runVerdict(["passed"])).toBe("passed");
    expect(
      verdictOfResults([
        { scenarioKey: "a", status: "passed" },
        { scenarioKey: "a", status: "failed" },
        { scenarioKey: "b", status: "passed" },
      ]),
    ).toBe("flaky");
  });
});

describe("tool mocks", () => {
  const mocks = [
    { tool: "book_table", arguments: { people: 4 }, output: "full" },
    { tool: "book_table", output: { ok: true } },
  ];
  test("the first mock whose tool matches and whose arguments are a subset answers", () => {
    expect(mockOutputText(matchMock(mocks, "book_table", { people: 4, time: "19:00" })!)).toBe("full");
    expect(mockOutputText(matchMock(mocks, "book_table", { people: 2 })!)).toBe('{"ok":true}');
    expect(matchMock(mocks, "lookup", {})).toBeUndefined();
  });
  test("subsets compare objects deeply and arrays whole; JSON Pointers escape ~ and /", () => {
    expect(isSubset({ a: { b: 1 } }, { a: { b: 1, c: 2 } })).toBe(true);
    expect(isSubset({ a: [1] }, { a: [1, 2] })).toBe(false);
    expect(atPointer({ "a/b": { "~": [5, 6] } }, "/a~1b/~0/1")).toBe(6);
    expect(atPointer({ a: 1 }, "/b")).toBeUndefined();
  });
});

describe("JUnit XML", () => {
  test("a testcase per scenario and iteration, failure with the first failed required criterion, escaped", () => {
    const failed = {
      name: "booked",
      type: "toolCalled" as const,
      required: true,
      verdict: "fail" as const,
      reason: 'called 0 <times> & "never"',
    };
    const xml = junitXml({ id: "run-1", name: "smoke" }, [
      {
        scenarioName: "books",
        iteration: 1,
        status: "passed",
        criteria: [],
        error: null,
        durationMs: 1500,
        transcript: "caller: hi\u0007",
      },
      {
        scenarioName: "books",
        iteration: 2,
        status: "failed",
        criteria: [failed],
        error: null,
        durationMs: 500,
        transcript: "agent: <b>",
      },
      {
        scenarioName: "refund",
        iteration: 1,
        status: "error",
        criteria: [],
        error: "judge down",
        durationMs: null,
        transcript: "",
      },
    ]);
    const doc = parseDocument(xml, { xmlMode: true });
    const suite = doc.children.find((n) => "name" in n && n.name === "testsuite") as any;
    expect(suite.attribs).toMatchObject({ tests: "3", failures: "1", errors: "1", time: "2.000" });
    const cases = suite.children.filter((n: any) => n.name === "testcase");
    expect(cases.map((n: any) => n.attribs.name)).toEqual(["books #1", "books #2", "refund #1"]);
    const failure = cases[1].children.find((n: any) => n.name === "failure");
    // the parser decodes what junitXml escaped: the reason comes back as written
    expect(failure.attribs.message).toBe('booked: called 0 <times> & "never"');
    expect(xml).toContain("<system-out>agent: &lt;b&gt;</system-out>");
    expect(xml).not.toContain("\u0007");
    expect(cases[2].children.find((n: any) => n.name === "error").attribs.message).toBe("judge down");
  });
});
