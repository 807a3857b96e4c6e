// LLM generation strategies (docs/console.md, "Strategies"): the list, and a form per strategy `type`
// generated from the API's schema for it (ranges and defaults as the API documents them).
import { type BodyOf, call } from "./api";
import { h } from "./dom";
import { deleteButton, formPage } from "./resource-page";

type Page = [RegExp, (...args: string[]) => Promise<Node>];
export const strategyRoutes: Page[] = [
  [/^#\/strategies$/, strategiesPage],
  [/^#\/strategies\/new(?:\?(.*))?$/, (query) => strategyPage(null, query)],
  [/^#\/strategies\/([\w-]+)$/, (id) => strategyPage(id!)],
];

async function strategiesPage() {
  const strategies = await call("get", "/llm-generation-strategies", {}, { query: "size=100&sort=name,asc" });
  return h(
    "div",
    {},
    h("h2", {}, "LLM generation strategies ", h("a", { href: "#/strategies/new", id: "new-strategy" }, "New strategy")),
    h(
      "p",
      { className: "note" },
      "How an assistant speaks: the engine (type), its voice, models and turn detection. Assistants and agents choose one.",
    ),
    h(
      "table",
      { id: "strategies-list" },
      h("tr", {}, h("th", {}, "name"), h("th", {}, "type")),
      strategies.map((s) =>
        h("tr", {}, h("td", {}, h("a", { href: `#/strategies/${s.id}` }, s.name)), h("td", {}, s.type)),
      ),
    ),
  );
}

/** `then` (from the first-run guide) is where a new strategy's page goes next. */
async function strategyPage(id: string | null, query?: string) {
  const then = new URLSearchParams(query ?? "").get("then");
  if (!id)
    return formPage({
      title: "New LLM generation strategy",
      method: "post",
      path: "/llm-generation-strategies",
      value: { name: "" },
      async save(body: BodyOf<"/llm-generation-strategies", "post">) {
        const created = await call("post", "/llm-generation-strategies", {}, { body });
        location.hash = then ?? `#/strategies/${created.id}`;
      },
    });
  const strategy = await call("get", "/llm-generation-strategies/{strategyId}", { strategyId: id });
  return formPage({
    title: `Strategy ${strategy.name}`,
    method: "put",
    path: "/llm-generation-strategies/{strategyId}",
    value: strategy,
    async save(body: BodyOf<"/llm-generation-strategies/{strategyId}", "put">) {
      await call("put", "/llm-generation-strategies/{strategyId}", { strategyId: id }, { body });
      return "Saved.";
    },
    more: (result) => [
      deleteButton(
        `the strategy “${strategy.name}”`,
        [id],
        () => call("delete", "/llm-generation-strategies/{strategyId}", { strategyId: id }),
        "#/strategies",
        result,
      ),
    ],
  });
}
