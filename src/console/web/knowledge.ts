// Knowledge in the console (docs/console.md, docs/knowledge.md): the organization's knowledge bases,
// a base's documents (upload, delete) and a search box that shows what the knowledge_base tool hands
// the LLM. (A knowledge_base extension is a form on its assistant's page like every other type.)
import { ApiError, call, callPaged, type DataOf, RawBody } from "./api";
import { assistantsApi } from "./assistants";
import { h, when } from "./dom";

const docsPerPage = 20;

/** An action's outcome in `target`: the text, or the error's message (a 409 said as what to do). */
async function report(target: HTMLElement, work: () => Promise<string>, conflict?: () => Promise<string>) {
  target.className = "";
  target.textContent = "";
  try {
    target.textContent = await work();
  } catch (e) {
    target.className = "error";
    target.textContent =
      e instanceof ApiError && e.status === 409 && conflict ? await conflict() : (e as Error).message;
  }
}

/** The assistants and agents whose knowledge tools search a base (the first 100 of each, as the lists show). */
async function usersOf(kbId: string): Promise<string[]> {
  const [assistants, agents] = await Promise.all([assistantsApi.list("assistants"), assistantsApi.list("agents")]);
  return [...assistants, ...agents]
    .filter((a) => a.extensions.some((e) => e.type === "knowledge_base" && e.parameters.knowledgeBaseId === kbId))
    .map((a) => a.name);
}

export async function knowledgeBasesPage(): Promise<Node> {
  const list = h("table", { id: "knowledge-bases" });
  const result = h("p", { id: "kb-result" });
  async function load() {
    const bases = await call("get", "/knowledge-bases", {}, { query: "size=100&sort=name,asc" });
    list.replaceChildren(
      h(
        "tr",
        {},
        ["Name", "Description", "Documents", "Chunks", ""].map((c) => h("th", {}, c)),
      ),
      ...bases.map((kb) => {
        const remove = h("button", { type: "button", className: "delete-kb" }, "Delete");
        remove.onclick = () => {
          if (!confirm(`Delete the knowledge base “${kb.name}” and all its documents?`)) return;
          void report(
            result,
            async () => {
              await call("delete", "/knowledge-bases/{knowledgeBaseId}", { knowledgeBaseId: kb.id });
              await load();
              return `Deleted “${kb.name}”.`;
            },
            async () => {
              const users = await usersOf(kb.id).catch(() => []);
              const by = users.length ? ` by ${users.map((u) => `“${u}”`).join(", ")}` : "";
              return `“${kb.name}” is in use${by}: a knowledge tool searches it. Remove that knowledge tool from the assistant's extensions first, then delete the base.`;
            },
          );
        };
        return h(
          "tr",
          { "data-id": kb.id },
          h("td", {}, h("a", { href: `#/knowledge/${kb.id}` }, kb.name)),
          h("td", {}, kb.description ?? ""),
          h("td", { className: "kb-documents" }, kb.documents),
          h("td", { className: "kb-chunks" }, kb.chunks),
          h("td", {}, remove),
        );
      }),
    );
  }
  await load();

  const name = h("input", { id: "kb-name", size: 40, required: true });
  const description = h("input", { id: "kb-description", size: 60 });
  const create = (event: Event) => {
    event.preventDefault();
    void report(result, async () => {
      const kb = await call(
        "post",
        "/knowledge-bases",
        {},
        {
          body: { name: name.value.trim(), description: description.value.trim() || null },
        },
      );
      location.hash = `#/knowledge/${kb.id}`;
      return `Created “${kb.name}”.`;
    });
  };
  return h(
    "div",
    {},
    h("h2", {}, "Knowledge bases"),
    h(
      "p",
      { className: "note" },
      "Documents an assistant can search while it talks, through a knowledge tool in its extensions.",
    ),
    list,
    result,
    h(
      "form",
      { id: "kb-create", onsubmit: create },
      h("h3", {}, "New knowledge base"),
      h("label", { htmlFor: "kb-name" }, "name"),
      name,
      h("label", { htmlFor: "kb-description" }, "description"),
      description,
      h("div", {}, h("button", { type: "submit" }, "Create")),
    ),
  );
}

/** The content type a file is sent as, from its name (browsers often leave `type` empty for .md). */
export function formatOf(file: { name: string; type: string }): string {
  const ext = file.name.toLowerCase().replace(/^.*\./, "");
  if (ext === "md" || ext === "markdown") return "text/markdown";
  if (ext === "html" || ext === "htm") return "text/html";
  if (ext === "json") return "application/json";
  return "text/plain";
}

const formats: [string, string][] = [
  ["text/plain", "plain text"],
  ["text/markdown", "Markdown"],
  ["text/html", "HTML"],
  ["application/json", "JSON {title, content, source?}"],
];

export async function knowledgeBasePage(id: string, query = ""): Promise<Node> {
  const page = Number(new URLSearchParams(query).get("page") ?? 0) || 0;
  const facts = h("p", { id: "kb-facts" });
  const heading = h("h2", {});
  const documents = h("table", { id: "documents" });
  const pager = h("div", { id: "documents-pager" });

  async function load() {
    const [kb, docs] = await Promise.all([
      call("get", "/knowledge-bases/{knowledgeBaseId}", { knowledgeBaseId: id }),
      callPaged(
        "/knowledge-bases/{knowledgeBaseId}/documents",
        { knowledgeBaseId: id },
        `page=${page}&size=${docsPerPage}&sort=createdAt,desc`,
      ),
    ]);
    heading.replaceChildren(h("a", { href: "#/knowledge" }, "Knowledge bases"), " / ", kb.name);
    facts.replaceChildren(
      kb.description ? `${kb.description} · ` : "",
      h("span", { id: "kb-document-count" }, kb.documents),
      " documents, ",
      h("span", { id: "kb-chunk-count" }, kb.chunks),
      " chunks",
    );
    documents.replaceChildren(
      h(
        "tr",
        {},
        ["Title", "Source", "Chunks", "Bytes", "Added", ""].map((c) => h("th", {}, c)),
      ),
      ...docs.data.map((d) => documentRow(d)),
    );
    const at = (n: number) => `#/knowledge/${id}?page=${n}`;
    pager.replaceChildren(
      page > 0 ? h("a", { href: at(page - 1), id: "documents-prev" }, "← newer") : "",
      ` page ${page + 1} of ${Math.max(docs.totalPages, 1)} (${docs.totalElements} documents) `,
      page + 1 < docs.totalPages ? h("a", { href: at(page + 1), id: "documents-next" }, "older →") : "",
    );
  }

  const deleted = h("p", { id: "document-result" });
  function documentRow(d: DataOf<"/knowledge-bases/{knowledgeBaseId}/documents", "get">[number]) {
    const remove = h("button", { type: "button", className: "delete-document" }, "Delete");
    remove.onclick = () => {
      if (!confirm(`Delete the document “${d.title}”?`)) return;
      void report(deleted, async () => {
        await call("delete", "/knowledge-bases/{knowledgeBaseId}/documents/{documentId}", {
          knowledgeBaseId: id,
          documentId: d.id,
        });
        await load();
        return `Deleted “${d.title}”.`;
      });
    };
    return h(
      "tr",
      { "data-id": d.id },
      h("td", { className: "doc-title" }, d.title),
      h("td", {}, d.source ?? ""),
      h("td", { className: "doc-chunks" }, d.chunks),
      h("td", {}, d.bytes),
      h("td", {}, when(d.createdAt)),
      h("td", {}, remove),
    );
  }
  await load();
  return h(
    "div",
    {},
    heading,
    facts,
    searchForm(id),
    h("h3", {}, "Documents"),
    documents,
    pager,
    deleted,
    uploadForm(id, load),
  );
}

function uploadForm(id: string, uploaded: () => Promise<void>) {
  const title = h("input", { id: "doc-title", size: 50, placeholder: "the file's name when empty" });
  const source = h("input", { id: "doc-source", size: 50, placeholder: "a URL or file name (optional)" });
  const file = h("input", { id: "doc-file", type: "file", accept: ".md,.markdown,.txt,.html,.htm,.json,text/*" });
  const text = h("textarea", { id: "doc-text", rows: 8, placeholder: "or paste the text here" });
  const format = h(
    "select",
    { id: "doc-format" },
    formats.map(([value, label]) => h("option", { value }, label)),
  );
  const result = h("p", { id: "upload-result" });

  async function upload() {
    const chosen = file.files?.[0];
    const type = chosen ? formatOf(chosen) : format.value;
    const body = chosen ?? text.value;
    if (!chosen && !text.value.trim()) throw new Error("choose a file or paste some text");
    const params = new URLSearchParams();
    // a JSON document carries its own title and source
    if (type !== "application/json") {
      params.set("title", title.value.trim() || chosen?.name.replace(/\.[^.]*$/, "") || "");
      const from = source.value.trim() || chosen?.name;
      if (from) params.set("source", from);
    }
    const raw = new RawBody(body, type === "application/json" ? type : `${type}; charset=utf-8`);
    const doc = await call(
      "post",
      "/knowledge-bases/{knowledgeBaseId}/documents",
      { knowledgeBaseId: id },
      { raw, query: params.toString() },
    );
    for (const el of [title, source, file, text]) el.value = "";
    await uploaded();
    return `Stored “${doc.title}”: ${doc.chunks} chunk${doc.chunks === 1 ? "" : "s"} from ${doc.bytes} bytes.`;
  }
  return h(
    "form",
    {
      id: "doc-upload",
      onsubmit: (event: Event) => {
        event.preventDefault();
        void report(result, upload);
      },
    },
    h("h3", {}, "Add a document"),
    h(
      "p",
      { className: "note" },
      "A file (.md, .html, .txt, or .json as {title, content, source?}) or pasted text, up to 5 MiB. HTML loses its tags, scripts and styles; the text is cut into chunks on headings and paragraphs.",
    ),
    h("label", { htmlFor: "doc-title" }, "title"),
    title,
    h("label", { htmlFor: "doc-source" }, "source"),
    source,
    h("label", { htmlFor: "doc-file" }, "file"),
    file,
    h("label", { htmlFor: "doc-text" }, "text, as ", format),
    text,
    h("div", {}, h("button", { type: "submit", id: "doc-upload-button" }, "Upload")),
    result,
  );
}

/** The search route answers exactly what the tool hands the LLM; both views of it are shown. */
function searchForm(id: string) {
  const q = h("input", { id: "search-q", size: 60, required: true, placeholder: "a question, as a caller would ask" });
  const max = h("input", { id: "search-max", type: "number", min: 1, max: 20, value: "3", required: true });
  const results = h("div", { id: "search-results" });
  async function search(event: Event) {
    event.preventDefault();
    const params = new URLSearchParams({ q: q.value, maxResults: max.value });
    try {
      const found = await call(
        "get",
        "/knowledge-bases/{knowledgeBaseId}/search",
        { knowledgeBaseId: id },
        { query: params.toString() },
      );
      results.replaceChildren(
        found.length === 0
          ? h("p", { className: "note" }, "Nothing found: the tool would hand the LLM no results.")
          : h(
              "table",
              { id: "search-table" },
              h(
                "tr",
                {},
                ["#", "Score", "Title", "Source", "Content"].map((c) => h("th", {}, c)),
              ),
              found.map((r, i) =>
                h(
                  "tr",
                  {},
                  h("td", {}, i + 1),
                  h("td", { className: "result-score" }, r.score.toFixed(4)),
                  h("td", { className: "result-title" }, r.title),
                  h("td", {}, r.source ?? ""),
                  h("td", { className: "result-content" }, r.content),
                ),
              ),
            ),
        h(
          "details",
          {},
          h("summary", {}, "What the LLM reads"),
          h("pre", { id: "search-json" }, JSON.stringify({ results: found }, null, 2)),
        ),
      );
    } catch (e) {
      results.replaceChildren(h("p", { className: "error" }, (e as Error).message));
    }
  }
  return h(
    "form",
    { id: "kb-search", className: "filters", onsubmit: search },
    h("label", {}, "Search ", q),
    h("label", {}, "maxResults ", max),
    h("button", { type: "submit" }, "Search"),
    results,
  );
}
