// Assistants and agents (docs/console.md, "Assistants"): the lists with the first-run guide, and each
// one's page: every field, extension and hook as a form generated from the API's schema for the body
// (schema-form.ts), saved as one PUT; Delete; and the dialer.
import { type Assistant, type BodyOf, call } from "./api";
import { h } from "./dom";
import { dialer } from "./dialer";
import { deleteButton, formPage, referenceChoices } from "./resource-page";

export type Kind = "assistants" | "agents";
type Page = [RegExp, (...args: string[]) => Promise<Node>];
export const assistantRoutes: Page[] = [
  [/^#\/assistants$/, assistantsPage],
  [/^#\/(assistants|agents)\/new(?:\?(.*))?$/, (kind, query) => newAssistantPage(kind as Kind, query)],
  [/^#\/(assistants|agents)\/([\w-]+)$/, (kind, id) => assistantPage(kind as Kind, id!)],
];

type AssistantBody = BodyOf<"/assistants", "post">;
const one = { assistants: "assistant", agents: "agent" } as const;

// the two resources have the same shapes under their own paths
export const assistantsApi = {
  list: (kind: Kind) =>
    kind === "assistants"
      ? call("get", "/assistants", {}, { query: "size=100" })
      : call("get", "/agents", {}, { query: "size=100" }),
  get: (kind: Kind, id: string): Promise<Assistant> =>
    kind === "assistants"
      ? call("get", "/assistants/{assistantId}", { assistantId: id })
      : call("get", "/agents/{agentId}", { agentId: id }),
  create: (kind: Kind, body: AssistantBody) =>
    kind === "assistants" ? call("post", "/assistants", {}, { body }) : call("post", "/agents", {}, { body }),
  replace: (kind: Kind, id: string, body: BodyOf<"/assistants/{assistantId}", "put">) =>
    kind === "assistants"
      ? call("put", "/assistants/{assistantId}", { assistantId: id }, { body })
      : call("put", "/agents/{agentId}", { agentId: id }, { body }),
  remove: (kind: Kind, id: string) =>
    kind === "assistants"
      ? call("delete", "/assistants/{assistantId}", { assistantId: id })
      : call("delete", "/agents/{agentId}", { agentId: id }),
};

/** What a new organization makes first, in order, each step done or a link; shown until it has an assistant. */
function firstRun(strategies: number) {
  const step = (done: boolean, text: string, link: Node | string) =>
    h("li", { className: done ? "done" : "" }, done ? "✓ " : "", text, " ", done ? "" : link);
  return h(
    "section",
    { id: "first-run", className: "first-run" },
    h("h2", {}, "Start here"),
    h("p", {}, "This organization has no assistant yet. Three steps to talk to one:"),
    h(
      "ol",
      {},
      step(
        strategies > 0,
        "Create an LLM generation strategy: how the assistant speaks (the engine, its voice and models).",
        h("a", { href: "#/strategies/new?then=%23%2Fassistants", id: "first-strategy" }, "New strategy"),
      ),
      step(
        false,
        "Create an assistant: its name, prompt and greeting, the strategy, its tools and hooks.",
        strategies > 0 ? h("a", { href: "#/assistants/new?then=talk", id: "first-assistant" }, "New assistant") : "",
      ),
      step(false, "Talk to it from this browser (the microphone), on its Talk page.", ""),
    ),
  );
}

async function assistantsPage() {
  const [assistants, agents, strategies] = await Promise.all([
    assistantsApi.list("assistants"),
    assistantsApi.list("agents"),
    call("get", "/llm-generation-strategies", {}, { query: "size=1" }),
  ]);
  const table = (kind: Kind, rows: Assistant[]) =>
    h(
      "table",
      { id: `${kind}-list` },
      h("tr", {}, h("th", {}, "Name"), h("th", {}, "Greeting"), h("th", {}, "")),
      rows.map((a) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/${kind}/${a.id}` }, a.name)),
          h("td", {}, a.systemPromptGreeting ?? ""),
          h("td", {}, h("a", { href: `#/talk/${kind}/${a.id}` }, "Talk")),
        ),
      ),
    );
  return h(
    "div",
    {},
    assistants.length + agents.length === 0 && firstRun(strategies.length),
    h("h2", {}, "Assistants ", h("a", { href: "#/assistants/new", id: "new-assistant" }, "New assistant")),
    table("assistants", assistants),
    h("h2", {}, "Agents ", h("a", { href: "#/agents/new", id: "new-agent" }, "New agent")),
    table("agents", agents),
  );
}

/** `then=talk` (the first-run guide) goes on to the new assistant's Talk page. */
async function newAssistantPage(kind: Kind, query?: string) {
  const talk = new URLSearchParams(query ?? "").get("then") === "talk";
  return formPage({
    title: `New ${one[kind]}`,
    method: "post",
    path: `/${kind}`,
    value: { name: "" },
    choices: await referenceChoices(),
    async save(body: AssistantBody) {
      const created = await assistantsApi.create(kind, body);
      location.hash = talk ? `#/talk/${kind}/${created.id}` : `#/${kind}/${created.id}`;
    },
  });
}

async function assistantPage(kind: Kind, id: string) {
  const [a, choices] = await Promise.all([assistantsApi.get(kind, id), referenceChoices()]);
  const form = await formPage({
    title: h("span", {}, a.name, " ", h("a", { href: `#/talk/${kind}/${id}`, id: "talk-link" }, "Talk")),
    method: "put",
    path: kind === "assistants" ? "/assistants/{assistantId}" : "/agents/{agentId}",
    value: a,
    choices,
    async save(body: BodyOf<"/assistants/{assistantId}", "put">) {
      await assistantsApi.replace(kind, id, body);
      return "Saved.";
    },
    more: (result) => [
      deleteButton(`the ${one[kind]} “${a.name}”`, [id], () => assistantsApi.remove(kind, id), `#/assistants`, result),
    ],
  });
  return h(
    "div",
    {},
    h(
      "p",
      { className: "note" },
      "Every field is the API's, by its name. Secrets (hook secrets, a knowledge tool's authToken) are write-only: an empty field keeps the stored one.",
    ),
    form,
    dialer(kind, id),
  );
}
