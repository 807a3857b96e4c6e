// The Tests page (docs/console.md, "Tests"): test scenarios as forms, a run of chosen scenarios
// against an assistant or agent (text or audio), and the run's results as they come in, each with its
// verdicts per criterion, its transcript and a link to its call.
import { type BodyOf, call, type DataOf } from "./api";
import { assistantsApi } from "./assistants";
import { h, poll, when } from "./dom";
import { messageLine } from "./messages";
import {
  asText,
  type FormContext,
  jsonOrText,
  mark,
  pairs,
  type Part,
  part,
  rows,
  type Schema,
  submitForm,
} from "./schema-form";

type Page = [RegExp, (...args: string[]) => Promise<Node>];
export const testsRoutes: Page[] = [
  [/^#\/tests$/, testsPage],
  [/^#\/tests\/scenarios\/new$/, () => scenarioPage(null)],
  [/^#\/tests\/scenarios\/([\w-]+)$/, (id) => scenarioPage(id!)],
  [/^#\/tests\/runs\/([\w-]+)$/, (id) => runPage(id!)],
];

const pollMs = 1000;
const pageSize = 100; // the API's largest page

type Scenario = DataOf<"/test-scenarios/{scenarioId}", "get">;
type ScenarioBody = BodyOf<"/test-scenarios", "post">;
type Turn = { say?: string; silenceMs?: number };
type Mock = NonNullable<Scenario["toolMocks"]>[number];
/** A criterion as its row reads it: the common fields, and its type's own by name. */
type CriterionValues = { name?: string; type?: string; required?: boolean; [field: string]: unknown };
/** A scenario as the form shows it: either kind's fields, each maybe absent. */
type ScenarioView = Pick<Scenario, "name" | "kind"> &
  Partial<{
    description: string | null;
    tags: string[];
    turns: Turn[];
    persona: string;
    goal: string;
    facts: Record<string, string>;
    maxTurns: number;
    variables: Record<string, string>;
    maxDurationSeconds: number;
    toolPolicy: string;
    toolMocks: Mock[];
  }> & { criteria: CriterionValues[] };
type Run = DataOf<"/test-runs/{testRunId}", "get">;
type Result = DataOf<"/test-runs/{testRunId}/results", "get">[number];

/** Every item of a paged list (a run has up to 2,000 results), one page after another. */
async function all<T>(page: (query: string) => Promise<T[]>): Promise<T[]> {
  const items: T[] = [];
  for (let n = 0; ; n++) {
    const data = await page(`size=${pageSize}&page=${n}`);
    items.push(...data);
    if (data.length < pageSize) return items;
  }
}
const finished = new Set(["completed", "canceled"]);

/** Assistants and agents, for the run's target and to name a run's target. */
async function targets() {
  const [assistants, agents] = await Promise.all([assistantsApi.list("assistants"), assistantsApi.list("agents")]);
  return [
    ...assistants.map((a) => ({ field: "assistantId" as const, id: a.id, label: `${a.name} (assistant)` })),
    ...agents.map((a) => ({ field: "agentId" as const, id: a.id, label: `${a.name} (agent)` })),
  ];
}

const countsText = (c: Run["counts"]) =>
  `${c.passed} passed · ${c.failed} failed · ${c.error} error · ${c.pending} pending (of ${c.total})`;

async function testsPage() {
  const [scenarios, runs, choices] = await Promise.all([
    all((query) => call("get", "/test-scenarios", {}, { query: `${query}&sort=name,asc` })),
    call("get", "/test-runs", {}, { query: "size=20" }),
    targets(),
  ]);
  const target = h(
    "select",
    { id: "run-target" },
    choices.map((c) => h("option", { value: `${c.field}:${c.id}` }, c.label)),
  );
  const modality = h(
    "select",
    { id: "run-modality" },
    h("option", { value: "text" }, "text"),
    h("option", { value: "audio" }, "audio (spoken through the TTS, heard through the STT)"),
  );
  const concurrency = h("input", { id: "run-concurrency", type: "number", min: 1, max: 20, value: "4" });
  const repeat = h("input", { id: "run-repeat", type: "number", min: 1, max: 10, value: "1" });
  const error = h("p", { id: "run-error", className: "error" });
  const chosen = scenarios.map((s) => h("input", { type: "checkbox", name: "run-scenario", value: s.id }));

  async function start(event: Event) {
    event.preventDefault();
    error.textContent = "";
    const scenarioIds = chosen.filter((c) => c.checked).map((c) => c.value);
    if (!scenarioIds.length) {
      error.textContent = "Choose at least one scenario.";
      return;
    }
    const [field, id] = target.value.split(":");
    try {
      const body = {
        [field!]: id,
        scenarioIds,
        modality: modality.value,
        concurrency: Number(concurrency.value),
        repeat: Number(repeat.value),
      } as BodyOf<"/test-runs", "post">;
      const run = await call("post", "/test-runs", {}, { body });
      location.hash = `#/tests/runs/${run.id}`;
    } catch (e) {
      error.textContent = (e as Error).message;
    }
  }

  const name = new Map(choices.map((c) => [c.id, c.label]));
  return h(
    "div",
    {},
    h("h2", {}, "Test scenarios ", h("a", { href: "#/tests/scenarios/new", id: "new-scenario" }, "New scenario")),
    h(
      "form",
      { id: "run-form", onsubmit: start },
      h(
        "table",
        { id: "scenarios-list" },
        h(
          "tr",
          {},
          ["Run", "Name", "Kind", "Criteria", "Description"].map((c) => h("th", {}, c)),
        ),
        scenarios.map((s, i) =>
          h(
            "tr",
            {},
            h("td", {}, chosen[i]),
            h("td", {}, h("a", { href: `#/tests/scenarios/${s.id}` }, s.name)),
            h("td", {}, s.kind),
            h("td", {}, s.criteria.map((c) => c.name).join(", ")),
            h("td", {}, s.description ?? ""),
          ),
        ),
      ),
      h(
        "div",
        { className: "filters" },
        h("label", {}, "against ", target),
        h("label", {}, "modality ", modality),
        h("label", {}, "concurrency ", concurrency),
        h("label", {}, "repeat ", repeat),
        h("button", { type: "submit", id: "run-start" }, "Run the chosen scenarios (text)"),
      ),
      error,
    ),
    h("h2", {}, "Runs"),
    h(
      "table",
      { id: "runs-list" },
      h(
        "tr",
        {},
        ["Created", "Against", "Status", "Verdict", "Results"].map((c) => h("th", {}, c)),
      ),
      runs.map((r) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/tests/runs/${r.id}` }, when(r.createdAt))),
          h("td", {}, name.get(r.assistantId ?? r.agentId ?? "") ?? r.assistantId ?? r.agentId),
          h("td", { className: `state-${r.status}` }, r.status),
          h("td", { className: `state-${r.verdict}` }, r.verdict ?? ""),
          h("td", {}, countsText(r.counts)),
        ),
      ),
    ),
  );
}

// ---- the scenario form ------------------------------------------------------------------------------

/** An input's text, the input marked as `field`. */
const valueAt = (el: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, field: string) =>
  mark(el, field).value;

function labelled(text: string, el: HTMLElement, title?: string) {
  return h("label", { title }, text, " ", el);
}

function turnRow(turn: Turn = { say: "" }): Part {
  const kind = h(
    "select",
    { className: "turn-kind" },
    h("option", { value: "say", selected: "say" in turn }, "says"),
    h("option", { value: "silenceMs", selected: "silenceMs" in turn }, "silent for (ms)"),
  );
  const text = h("input", { className: "turn-text", size: 70, value: String(turn.say ?? turn.silenceMs ?? "") });
  return {
    el: h("span", {}, "caller ", kind, " ", text),
    read: (field) =>
      kind.value === "say"
        ? { say: valueAt(text, `${field}.say`) }
        : { silenceMs: Number(valueAt(text, `${field}.silenceMs`)) },
  };
}

function mockRow(mock: Partial<Mock> = {}): Part {
  const tool = h("input", { className: "mock-tool", placeholder: "tool name", value: mock.tool ?? "" });
  const args = pairs(mock.arguments, { json: true });
  const output = h("textarea", { className: "mock-output", rows: 2 }, asText(mock.output));
  const delay = h("input", { className: "mock-delay", type: "number", min: 0, value: mock.delayMs ?? "" });
  return {
    el: h(
      "div",
      { className: "mock" },
      labelled("tool", tool),
      h("label", {}, "when its arguments include"),
      args.el,
      labelled("answers (text, or JSON)", output),
      labelled("after (ms)", delay),
    ),
    read: (field) => {
      const text = output.value.trim();
      // JSON objects and arrays stay JSON (the tool's text is the same either way); anything else is text
      const parsed = jsonOrText(text);
      return {
        tool: valueAt(tool, `${field}.tool`).trim(),
        arguments: args.read(`${field}.arguments`),
        output: typeof parsed === "object" && parsed !== null ? parsed : output.value,
        delayMs: valueAt(delay, `${field}.delayMs`) === "" ? undefined : Number(delay.value),
      };
    },
  };
}

// The criteria's JSON Schemas come from the server (src/models/testing.ts): each type's own fields are
// built from its schema by the console's form builder, so the form cannot drift from what the API accepts.
let criterionSchemas: Promise<Record<string, Schema>> | null = null;
const loadCriterionSchemas = () =>
  (criterionSchemas ??= fetch("/console/criteria.json").then((r) => r.json() as Promise<Record<string, Schema>>));
const common = new Set(["name", "type", "required"]);
const noReferences: FormContext = { schemas: {}, choices: () => undefined };

function criterionRow(schemas: Record<string, Schema>, criterion: CriterionValues = { type: "said", name: "" }): Part {
  const name = h("input", { className: "criterion-name", placeholder: "name", value: criterion.name ?? "" });
  const type = h(
    "select",
    { className: "criterion-type" },
    Object.keys(schemas).map((t) => h("option", { value: t, selected: t === criterion.type }, t)),
  );
  const required = h("input", {
    type: "checkbox",
    className: "criterion-required",
    checked: criterion.required !== false,
  });
  const fields = h("div", { className: "criterion-fields" });
  let inputs: [string, Part][] = [];
  const build = (values: CriterionValues) => {
    const schema = schemas[type.value]!;
    inputs = Object.entries(schema.properties ?? {})
      .filter(([key]) => !common.has(key))
      .map(([key, s]) => [key, part(noReferences, s, values[key], schema.required?.includes(key) ?? false, key)]);
    fields.replaceChildren(...inputs.map(([, p]) => p.el));
    // names the inputs (the labels are the fields' own names)
    for (const [key, p] of inputs) p.read(key);
  };
  build(criterion);
  type.onchange = () => build({});
  const el = h(
    "div",
    { className: "criterion" },
    h("div", { className: "filters" }, labelled("name", name), labelled("type", type), labelled("required", required)),
    fields,
  );
  return {
    el,
    read: (field) => {
      mark(el, field);
      const own = Object.fromEntries(inputs.map(([key, p]) => [key, p.read(`${field}.${key}`, `${field}.`)]));
      return { name: valueAt(name, `${field}.name`), type: type.value, required: required.checked, ...own };
    },
  };
}

const blank: ScenarioView = {
  name: "",
  kind: "scripted",
  turns: [{ say: "" }],
  toolMocks: [],
  toolPolicy: "mock",
  criteria: [{ name: "", type: "said", by: "agent", pattern: "" }],
};

async function scenarioPage(id: string | null) {
  const [s, schemas]: [ScenarioView, Record<string, Schema>] = await Promise.all([
    id ? call("get", "/test-scenarios/{scenarioId}", { scenarioId: id }) : blank,
    loadCriterionSchemas(),
  ]);
  const name = h("input", { id: "scenario-name", size: 60, value: s.name });
  const description = h("textarea", { id: "scenario-description", rows: 2 }, s.description ?? "");
  const tags = h("input", { id: "scenario-tags", size: 60, value: (s.tags ?? []).join(", ") });
  const kind = h(
    "select",
    { id: "scenario-kind" },
    ["scripted", "simulated"].map((k) => h("option", { value: k, selected: k === s.kind }, k)),
  );
  const turns = rows(s.turns ?? [{ say: "" }], turnRow, { className: "turns", addLabel: "Add a turn" });
  const persona = h("textarea", { id: "scenario-persona", rows: 3 }, s.persona ?? "");
  const goal = h("textarea", { id: "scenario-goal", rows: 2 }, s.goal ?? "");
  const facts = pairs(s.facts, { json: false });
  const maxTurns = h("input", { id: "scenario-max-turns", type: "number", min: 1, max: 50, value: s.maxTurns ?? 12 });
  const variables = pairs(s.variables, { json: false });
  const maxDuration = h("input", {
    id: "scenario-max-duration",
    type: "number",
    min: 10,
    max: 900,
    value: s.maxDurationSeconds ?? 300,
  });
  const toolPolicy = h(
    "select",
    { id: "scenario-tool-policy" },
    h("option", { value: "mock", selected: s.toolPolicy !== "live" }, "mock: unmocked tools get an error"),
    h("option", { value: "live", selected: s.toolPolicy === "live" }, "live: unmocked tools reach their webhook"),
  );
  const mocks = rows(s.toolMocks ?? [], mockRow, { className: "mocks", addLabel: "Add a tool mock" });
  const criteria = rows(s.criteria, (c) => criterionRow(schemas, c), {
    className: "criteria",
    addLabel: "Add a criterion",
  });
  const scripted = h("fieldset", { id: "scripted" }, h("legend", {}, "What the caller says, in order"), turns.el);
  const simulated = h(
    "fieldset",
    { id: "simulated" },
    h("legend", {}, "The simulated caller (an LLM)"),
    labelled("persona: who the caller is and how they talk", persona),
    labelled("goal", goal),
    h("label", {}, "facts the caller gives when asked"),
    facts.el,
    labelled("at most this many turns", maxTurns),
  );
  const showKind = () => {
    scripted.hidden = kind.value !== "scripted";
    simulated.hidden = kind.value !== "simulated";
  };
  kind.onchange = showKind;
  showKind();
  const result = h("p", { id: "scenario-result" });
  const form = h(
    "form",
    { id: "scenario-form", onsubmit: save },
    h("h2", {}, id ? `Scenario ${s.name}` : "New scenario"),
    labelled("name", mark(name, "name")),
    labelled("description", mark(description, "description")),
    labelled("tags (comma-separated)", mark(tags, "tags")),
    labelled("kind", kind),
    scripted,
    simulated,
    h("label", {}, "variables (the call's {{name}} values)"),
    variables.el,
    labelled("longest call (s)", mark(maxDuration, "maxDurationSeconds")),
    h("fieldset", {}, h("legend", {}, "Tool mocks"), labelled("tools without a mock", toolPolicy), mocks.el),
    h("fieldset", {}, h("legend", {}, "Criteria"), criteria.el),
    h("button", { type: "submit", id: "scenario-save" }, "Save"),
    id && deleteButton(id, result),
    result,
  );

  function body() {
    const definition =
      kind.value === "scripted"
        ? { turns: turns.read("turns") }
        : {
            persona: valueAt(persona, "persona"),
            goal: valueAt(goal, "goal"),
            facts: facts.read("facts"),
            maxTurns: Number(valueAt(maxTurns, "maxTurns")),
          };
    return {
      name: name.value,
      description: description.value || null,
      tags: tags.value
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean),
      kind: kind.value,
      ...definition,
      variables: variables.read("variables"),
      maxDurationSeconds: Number(maxDuration.value),
      toolPolicy: toolPolicy.value,
      toolMocks: mocks.read("toolMocks"),
      criteria: criteria.read("criteria"),
    };
  }

  async function save(event: Event) {
    event.preventDefault();
    // the form's rows read as the API's fields; the API checks them, and a refusal is shown on the inputs
    // it names, or their nearest part (a criterion for `criteria[0]`)
    await submitForm(form, result, async () => {
      const saved = id
        ? await call("put", "/test-scenarios/{scenarioId}", { scenarioId: id }, { body: body() as ScenarioBody })
        : await call("post", "/test-scenarios", {}, { body: body() as ScenarioBody });
      if (id) return "Saved.";
      location.hash = `#/tests/scenarios/${saved.id}`;
      return undefined;
    });
  }
  return form;
}

/** Deleting takes a second click: there is no undo. */
function deleteButton(id: string, result: HTMLElement) {
  const button = h("button", { type: "button", id: "scenario-delete" }, "Delete");
  button.onclick = async () => {
    if (button.dataset.armed !== "yes") {
      button.dataset.armed = "yes";
      button.textContent = "Delete: click again to confirm";
      return;
    }
    try {
      await call("delete", "/test-scenarios/{scenarioId}", { scenarioId: id });
      location.hash = "#/tests";
    } catch (e) {
      result.className = "error";
      result.textContent = (e as Error).message;
    }
  };
  return button;
}

// ---- a run --------------------------------------------------------------------------------------------

async function runPage(id: string) {
  const status = h("span", { id: "run-status" });
  const verdict = h("span", { id: "run-verdict" });
  const counts = h("span", { id: "run-counts" });
  const note = h("p", { id: "run-note", className: "note" });
  const cancel = h("button", { type: "button", id: "run-cancel" }, "Cancel the run");
  const results = h("div", { id: "run-results" });
  const shown = new Map<string, HTMLElement>(); // a listed result is final: each is built once
  const section = h(
    "div",
    {},
    h("h2", {}, "Test run ", h("a", { href: "#/tests" }, "(all tests)")),
    h(
      "table",
      { id: "run-facts" },
      [
        ["Status", status],
        ["Verdict", verdict],
        ["Results", counts],
      ].map(([k, v]) => h("tr", {}, h("th", {}, k as string), h("td", {}, v as Node))),
    ),
    cancel,
    note,
    results,
  );
  cancel.onclick = async () => {
    cancel.disabled = true;
    await call("post", "/test-runs/{testRunId}/cancel", { testRunId: id }).catch((e) =>
      note.replaceChildren((e as Error).message),
    );
  };

  /** Shows the run and its results; true once the run is over. */
  async function refresh() {
    try {
      const [run, list] = await Promise.all([
        call("get", "/test-runs/{testRunId}", { testRunId: id }),
        all((query) => call("get", "/test-runs/{testRunId}/results", { testRunId: id }, { query })),
      ]);
      status.textContent = run.status;
      status.className = `state-${run.status}`;
      verdict.textContent = run.verdict ?? "not yet";
      verdict.className = `state-${run.verdict}`;
      counts.textContent = countsText(run.counts);
      const over = finished.has(run.status);
      cancel.hidden = over;
      note.textContent = over ? "" : "Results appear here as each call ends.";
      results.replaceChildren(
        ...list.map((r) => {
          const el = shown.get(r.id) ?? resultView(r);
          shown.set(r.id, el);
          return el;
        }),
      );
      return over;
    } catch (e) {
      note.textContent = `${(e as Error).message} (trying again)`;
      return false;
    }
  }
  // the first refresh before the page is shown, then until the run is over or the page was left
  if (!(await refresh())) poll(section, pollMs, refresh);
  return section;
}

function resultView(r: Result) {
  const transcript = h("div", { className: "transcript" }, h("p", { className: "note" }, "Loading…"));
  if (r.agentTaskId)
    call("get", "/agent-tasks/{agentTaskId}", { agentTaskId: r.agentTaskId })
      .then((task) =>
        transcript.replaceChildren(
          ...(task.messages === null
            ? [h("p", { className: "note" }, "No messages kept.")]
            : task.messages.map(messageLine)),
        ),
      )
      .catch((e) => transcript.replaceChildren(h("p", { className: "error" }, (e as Error).message)));
  else transcript.replaceChildren(h("p", { className: "note" }, "No call was placed."));
  const m = r.metrics;
  return h(
    "section",
    { className: "result", "data-result-id": r.id },
    h(
      "h3",
      {},
      `${r.scenarioName} #${r.iteration}: `,
      h("span", { className: `result-status state-${r.status}` }, r.status),
      " ",
      r.agentTaskId && h("a", { href: `#/calls/${r.agentTaskId}`, className: "call-link" }, "the call"),
    ),
    r.error && h("p", { className: "error" }, r.error),
    m &&
      h(
        "p",
        { className: "note" },
        `${m.turns} turns, ${(m.durationMs / 1000).toFixed(1)} s`,
        m.firstAudioMs ? `, first audio p50 ${m.firstAudioMs.p50} ms, p95 ${m.firstAudioMs.p95} ms` : "",
      ),
    h(
      "table",
      { className: "criteria" },
      h(
        "tr",
        {},
        ["Criterion", "Type", "Required", "Verdict", "Why"].map((c) => h("th", {}, c)),
      ),
      r.criteria.map((c) =>
        h(
          "tr",
          { "data-criterion": c.name },
          h("td", {}, c.name),
          h("td", {}, c.type),
          h("td", {}, c.required ? "yes" : "no"),
          h("td", { className: `verdict verdict-${c.verdict}` }, c.verdict),
          h("td", {}, c.reason),
        ),
      ),
    ),
    h("details", { open: true }, h("summary", {}, "Transcript and tool calls"), transcript),
  );
}
