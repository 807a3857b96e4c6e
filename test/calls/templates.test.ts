import { expect, test } from "bun:test";
import { callVariables, renderTemplate } from "../../src/calls/templates";

test("{{name}} becomes the variable; a missing name renders empty", () => {
  expect(
    renderTemplate("Hi {{first_name}}, about {{ topic }}.{{missing}}", { first_name: "Ada", topic: "your order" }),
  ).toBe("Hi Ada, about your order.");
});

test("JSON and every other brace in a prompt is left exactly as written, variables beside it still render", () => {
  const prompt = [
    'Answer with {"type": "booking", "slots": [{"day": "mon"}]} and nothing else.',
    'Nested: {{"a": {"b": 1}}} and {{ not a name }} and {{1abc}} and { {x} } and {{x}',
    "Template literal: $" + "{name} and {name} and {{{name}}}",
    "Dear {{name}}.",
  ].join("\n");
  expect(renderTemplate(prompt, { name: "Bo" })).toBe(
    [
      'Answer with {"type": "booking", "slots": [{"day": "mon"}]} and nothing else.',
      'Nested: {{"a": {"b": 1}}} and {{ not a name }} and {{1abc}} and { {x} } and {{x}',
      "Template literal: $" + "{name} and {name} and {Bo}",
      "Dear Bo.",
    ].join("\n"),
  );
});

test("a value is inserted as is: braces in a value are not rendered again", () => {
  expect(renderTemplate("{{a}} {{b}}", { a: "{{b}}", b: "$& $1" })).toBe("{{b}} $& $1");
});

test("inherited object names are not variables", () => {
  expect(renderTemplate("[{{constructor}}][{{toString}}][{{__proto__}}]", {})).toBe("[][][]");
});

test("built-ins: numbers, call id, direction, now/date/time in UTC; a given variable cannot override them", () => {
  const now = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const vars = callVariables(
    { first_name: "Ada", call_id: "spoofed", direction: "spoofed" },
    { callerNumber: "+15550001111", calledNumber: "+15550002222", callId: "c-1", direction: "outbound", now },
  );
  expect(vars).toEqual({
    first_name: "Ada",
    caller_number: "+15550001111",
    called_number: "+15550002222",
    call_id: "c-1",
    direction: "outbound",
    now: "2026-01-02T03:04:05Z",
    date: "2026-01-02",
    time: "03:04",
  });
  expect(
    callVariables({}, { callerNumber: null, calledNumber: null, callId: "c", direction: "inbound", now }).caller_number,
  ).toBe("");
});
