// What every create/edit page of the console shares: a form generated from the API's schema for the
// request's body (schema-form.ts), saved with the page's own typed call, a 400 shown on its fields; and
// a delete that asks first and, on a 409, says what uses the thing.
import { ApiError, call } from "./api";
import { h } from "./dom";
import { bodySchema, type Choice, part, submitForm } from "./schema-form";

/** Choices for id fields by name: the resources an assistant's form refers to. */
export async function referenceChoices(): Promise<(name: string) => Choice[] | undefined> {
  const [strategies, credentials, bases, assistants] = await Promise.all([
    call("get", "/llm-generation-strategies", {}, { query: "size=100" }),
    call("get", "/sip/credentials", {}, { query: "size=100" }),
    call("get", "/knowledge-bases", {}, { query: "size=100&sort=name,asc" }),
    call("get", "/assistants", {}, { query: "size=100" }),
  ]);
  const numbers = await Promise.all(
    credentials.map((c) =>
      call(
        "get",
        "/sip/credentials/{sipCredentialsId}/phone-numbers",
        { sipCredentialsId: c.id },
        { query: "size=100" },
      ),
    ),
  );
  const lists: Record<string, Choice[]> = {
    llmAudioContentGenerationStrategyId: strategies.map((s) => ({ value: s.id, label: `${s.name} (${s.type})` })),
    telephoneNumberId: numbers.flat().map((n) => ({ value: n.id, label: n.phoneNumber })),
    knowledgeBaseId: bases.map((b) => ({ value: b.id, label: b.name })),
    assistantId: assistants.map((a) => ({ value: a.id, label: a.name })),
  };
  return (name) => lists[name];
}

export type FormPage = {
  title: Node | string;
  /** the operation whose body the form is: `post` on `/assistants`, `put` on `/assistants/{assistantId}` */
  method: "post" | "put";
  path: string;
  value: unknown;
  choices?: (name: string) => Choice[] | undefined;
  /** sends the body; a text is shown as the outcome (a page that moves on returns nothing) */
  save: (body: never) => Promise<unknown>;
  /** shown under the Save button (Delete, a dialer) */
  more?: (result: HTMLElement) => Node[];
};

/** A page with the form for the operation's body, filled with `value`. */
export async function formPage(page: FormPage): Promise<HTMLFormElement> {
  const { schema, schemas } = await bodySchema(page.method, page.path);
  const root = part({ schemas, choices: page.choices ?? (() => undefined) }, schema, page.value, true);
  root.read(""); // names the inputs
  const result = h("p", { id: "save-result" });
  const form = h(
    "form",
    { className: "resource-form", onsubmit: save },
    h("h2", {}, page.title),
    root.el,
    h("button", { type: "submit", id: "save" }, "Save"),
    page.more?.(result),
    result,
  );
  async function save(event: Event) {
    event.preventDefault();
    await submitForm(form, result, async () => {
      const outcome = await page.save(root.read("") as never);
      return typeof outcome === "string" ? outcome : undefined;
    });
  }
  return form;
}

/** The assistants and agents whose settings name `ids` (a strategy, a phone number, an assistant a handoff names). */
async function usersOf(ids: string[]): Promise<string[]> {
  const [assistants, agents] = await Promise.all([
    call("get", "/assistants", {}, { query: "size=100" }),
    call("get", "/agents", {}, { query: "size=100" }),
  ]);
  const uses = (a: { id: string }) => ids.some((id) => id !== a.id && JSON.stringify(a).includes(id));
  return [
    ...assistants.filter(uses).map((a) => `“${a.name}” (assistant)`),
    ...agents.filter(uses).map((a) => `“${a.name}” (agent)`),
  ];
}

/**
 * Delete, after a confirmation; on the API's 409 the result says who uses the thing (the assistants and
 * agents naming `ids`) and the API's own words.
 */
export function deleteButton(
  what: string,
  ids: string[],
  remove: () => Promise<unknown>,
  then: string,
  result: HTMLElement,
) {
  const button = h("button", { type: "button", id: "delete" }, "Delete");
  button.onclick = async () => {
    if (!confirm(`Delete ${what}? This cannot be undone.`)) return;
    result.className = "";
    result.textContent = "";
    try {
      await remove();
      location.hash = then;
    } catch (e) {
      result.className = "error";
      if (!(e instanceof ApiError && e.status === 409)) {
        result.textContent = e instanceof Error ? e.message : String(e);
        return;
      }
      const users = await usersOf(ids).catch(() => []);
      result.textContent = `${what} is in use${users.length ? ` by ${users.join(", ")}` : ""}, so it cannot be deleted: ${
        users.length ? "change or delete those first. " : ""
      }The API said: ${e.message}`;
      result.dataset.conflict = "yes";
    }
  };
  return button;
}
