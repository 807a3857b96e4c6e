// Campaigns (P/campaigns): the list with counts, a campaign's page with its contacts and the pause /
// resume / cancel buttons, and the form that creates one (contacts as CSV, sent as text/csv so the
// API's own CSV reader and its 400s naming the field apply). Counts and contacts refresh by polling
// while the page is shown.
import { call, callPaged, type DataOf, RawBody } from "./api";
import { assistantsApi } from "./assistants";
import { contactStatuses } from "../../db/schema/campaign-values";
import { h, poll, when } from "./dom";

const pollMs = 2000;
// the counts the API gives: the total, then one per contact status, camelCased ("no-answer" → noAnswer)
const countNames = ["total", ...contactStatuses.map((s) => s.replace(/-(\w)/g, (_m, c: string) => c.toUpperCase()))];
const weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

type Campaign = DataOf<"/campaigns/{campaignId}", "get">;
const countCells = (c: Pick<Campaign, "counts">) =>
  countNames.map((n) => h("td", { className: `count-${n}` }, String(c.counts[n as keyof Campaign["counts"]])));

export async function campaignsPage() {
  const list = h(
    "table",
    { id: "campaigns-list" },
    h(
      "tr",
      {},
      ["Name", "Status", ...countNames, "Created"].map((c) => h("th", {}, c)),
    ),
  );
  const fill = (rows: DataOf<"/campaigns", "get">) =>
    list.replaceChildren(
      list.firstChild!,
      ...rows.map((c) =>
        h(
          "tr",
          { "data-id": c.id },
          h("td", {}, h("a", { href: `#/campaigns/${c.id}` }, c.name)),
          h("td", { className: `state-${c.status} status` }, c.status),
          countCells(c),
          h("td", {}, when(c.createdAt)),
        ),
      ),
    );
  const load = async () => fill(await call("get", "/campaigns", {}, { query: "size=100&sort=createdAt,desc" }));
  await load();
  const page = h(
    "div",
    {},
    h("h2", {}, "Campaigns ", h("a", { href: "#/campaigns/new", id: "new-campaign" }, "New campaign")),
    list,
  );
  poll(page, pollMs, load);
  return page;
}

export async function campaignPage(id: string) {
  const params = new URLSearchParams(location.hash.split("?")[1] ?? "");
  const pageNo = Number(params.get("page") ?? 0);
  const filter = params.get("status") ?? "";
  const status = h("span", { id: "campaign-status" });
  const counts = h("table", { id: "campaign-counts" });
  const contacts = h("table", { id: "campaign-contacts" });
  const pager = h("p", { id: "contacts-pager" });
  const error = h("p", { className: "error", id: "campaign-error" });
  const buttons = Object.fromEntries(
    (["pause", "resume", "cancel"] as const).map((action) => [
      action,
      h("button", { type: "button", id: `campaign-${action}`, onclick: () => act(action) }, action),
    ]),
  ) as Record<"pause" | "resume" | "cancel", HTMLButtonElement>;
  const hashFor = (page: number, s = filter) =>
    `#/campaigns/${id}?${new URLSearchParams({ page: String(page), ...(s && { status: s }) })}`;
  const statusSelect = h(
    "select",
    { id: "contacts-status", onchange: () => (location.hash = hashFor(0, statusSelect.value)) },
    ["", ...contactStatuses].map((s) => h("option", { value: s, selected: s === filter }, s || "any")),
  );

  function showCampaign(c: Pick<Campaign, "status" | "counts">) {
    status.textContent = c.status;
    status.className = `state-${c.status}`;
    buttons.pause.disabled = c.status !== "running";
    buttons.resume.disabled = c.status !== "paused";
    buttons.cancel.disabled = c.status === "completed" || c.status === "canceled";
    counts.replaceChildren(
      h(
        "tr",
        {},
        countNames.map((n) => h("th", {}, n)),
      ),
      h("tr", {}, countCells(c)),
    );
  }
  async function showContacts() {
    const query = new URLSearchParams({ page: String(pageNo), size: "50", ...(filter && { status: filter }) });
    const page = await callPaged("/campaigns/{campaignId}/contacts", { campaignId: id }, query.toString());
    contacts.replaceChildren(
      h(
        "tr",
        {},
        ["To", "Status", "Attempts", "Last endedReason", "Calls", "Variables"].map((c) => h("th", {}, c)),
      ),
      ...page.data.map((c) =>
        h(
          "tr",
          {},
          h("td", {}, c.to),
          h("td", { className: `state-${c.status} status` }, c.status),
          h("td", { className: "attempts" }, String(c.attempts)),
          h("td", { className: "ended-reason" }, c.lastEndedReason ?? ""),
          h(
            "td",
            {},
            c.agentTaskIds.map((t, i) => [i ? " " : "", h("a", { href: `#/calls/${t}` }, `#${i + 1}`)]),
          ),
          h("td", {}, h("code", {}, JSON.stringify(c.variables))),
        ),
      ),
    );
    pager.replaceChildren(
      pageNo > 0 ? h("a", { href: hashFor(pageNo - 1), id: "contacts-prev" }, "← previous") : "",
      ` page ${page.page + 1} of ${Math.max(page.totalPages, 1)} (${page.totalElements} contacts) `,
      pageNo + 1 < page.totalPages ? h("a", { href: hashFor(pageNo + 1), id: "contacts-next" }, "next →") : "",
    );
  }
  async function act(action: "pause" | "resume" | "cancel") {
    error.textContent = "";
    try {
      const params = { campaignId: id };
      showCampaign(
        await (action === "pause"
          ? call("post", "/campaigns/{campaignId}/pause", params)
          : action === "resume"
            ? call("post", "/campaigns/{campaignId}/resume", params)
            : call("post", "/campaigns/{campaignId}/cancel", params)),
      );
    } catch (e) {
      error.textContent = (e as Error).message;
    }
  }

  const c = await call("get", "/campaigns/{campaignId}", { campaignId: id });
  showCampaign(c);
  await showContacts();
  const owner = c.assistantId ? `assistants/${c.assistantId}` : `agents/${c.agentId}`;
  const facts: [string, Node | string][] = [
    ["Status", status],
    ["Assistant/agent", h("a", { href: `#/${owner}` }, owner.split("/")[1]!)],
    ["Caller number", c.phoneNumberId],
    ["maxConcurrentCalls / reservedInboundSlots", `${c.maxConcurrentCalls} / ${c.reservedInboundSlots}`],
    ["Schedule", c.schedule ? JSON.stringify(c.schedule) : "now, always"],
    ["Retry", JSON.stringify(c.retry)],
    ["Voicemail", JSON.stringify(c.voicemail)],
    ["Created", when(c.createdAt)],
  ];
  const page = h(
    "div",
    {},
    h("h2", {}, "Campaign ", c.name),
    h(
      "table",
      { id: "campaign-facts" },
      facts.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v))),
    ),
    h("div", {}, buttons.pause, buttons.resume, buttons.cancel),
    error,
    counts,
    h("h3", {}, "Contacts"),
    h("label", { className: "inline" }, "status ", statusSelect),
    contacts,
    pager,
  );
  poll(page, pollMs, async () => {
    showCampaign(await call("get", "/campaigns/{campaignId}", { campaignId: id }));
    await showContacts();
  });
  return page;
}

/** The create form: every field of the campaign, the contacts as CSV (pasted, or read from a file). */
export async function newCampaignPage() {
  const [assistants, agents, credentials] = await Promise.all([
    assistantsApi.list("assistants"),
    assistantsApi.list("agents"),
    call("get", "/sip/credentials", {}, { query: "size=100" }),
  ]);
  const input = (id: string, props: Record<string, unknown> = {}) => h("input", { id, ...props });
  const field = (label: string, el: HTMLElement) => [h("label", { htmlFor: el.id }, label), el];
  const name = input("campaign-name", { size: 40, required: true });
  const owner = h(
    "select",
    { id: "campaign-owner" },
    assistants.map((a) => h("option", { value: `assistantId:${a.id}` }, `${a.name} (assistant)`)),
    agents.map((a) => h("option", { value: `agentId:${a.id}` }, `${a.name} (agent)`)),
  );
  const credential = h(
    "select",
    { id: "campaign-credential", onchange: () => void loadNumbers() },
    credentials.map((c) => h("option", { value: c.id }, `${c.username}@${c.hostname}:${c.port}`)),
  );
  const number = h("select", { id: "campaign-number" });
  async function loadNumbers() {
    const numbers = credential.value
      ? await call(
          "get",
          "/sip/credentials/{sipCredentialsId}/phone-numbers",
          { sipCredentialsId: credential.value },
          { query: "size=100" },
        )
      : [];
    number.replaceChildren(...numbers.map((n) => h("option", { value: n.id }, n.phoneNumber)));
  }
  await loadNumbers();
  const contacts = h("textarea", { id: "campaign-contacts", rows: 6, placeholder: "to,first_name\n+15551230000,Ada" });
  const file = input("campaign-file", { type: "file", accept: ".csv,text/csv" });
  file.onchange = async () => {
    const chosen = file.files?.[0];
    if (chosen) contacts.value = await chosen.text();
  };
  const scheduled = input("campaign-scheduled", { type: "checkbox" });
  const timezone = input("campaign-timezone", { value: Intl.DateTimeFormat().resolvedOptions().timeZone });
  const days = weekdays.map((d) =>
    input(`campaign-day-${d}`, { type: "checkbox", value: d, checked: d !== "sat" && d !== "sun" }),
  );
  const start = input("campaign-start", { type: "time", value: "09:00" });
  const end = input("campaign-end", { type: "time", value: "17:00" });
  const maxConcurrent = input("campaign-max-concurrent", { type: "number", min: 1, max: 100, value: 1 });
  const reserved = input("campaign-reserved", { type: "number", min: 0, value: 0 });
  const ringTimeout = input("campaign-ring-timeout", { type: "number", min: 5, max: 300, value: 30 });
  const attempts = input("campaign-max-attempts", { type: "number", min: 1, max: 10, value: 3 });
  const reasons = ["busy", "no-answer", "failed"].map((r) =>
    input(`campaign-retry-${r}`, { type: "checkbox", value: r, checked: r !== "failed" }),
  );
  const delay = input("campaign-retry-delay", { type: "number", min: 0, max: 1440, value: 60 });
  const voicemail = h(
    "select",
    { id: "campaign-voicemail" },
    ["continue", "hangup", "leave_message"].map((a) => h("option", { value: a }, a)),
  );
  const message = h("textarea", { id: "campaign-voicemail-message", rows: 2 });
  const error = h("p", { className: "error", id: "campaign-error" });

  async function create(event: Event) {
    event.preventDefault();
    error.textContent = "";
    const [ownerField, ownerId] = owner.value.split(":");
    // text/csv carries the contacts; every other field goes in the query (schedule, retry and voicemail as JSON)
    const query = new URLSearchParams({
      name: name.value,
      [ownerField!]: ownerId!,
      ...(number.value && { phoneNumberId: number.value }),
      maxConcurrentCalls: maxConcurrent.value,
      reservedInboundSlots: reserved.value,
      ringTimeoutSeconds: ringTimeout.value,
      retry: JSON.stringify({
        maxAttempts: Number(attempts.value),
        onReasons: reasons.filter((r) => r.checked).map((r) => r.value),
        delayMinutes: Number(delay.value),
      }),
      voicemail: JSON.stringify({ action: voicemail.value, ...(message.value && { message: message.value }) }),
    });
    if (scheduled.checked)
      query.set(
        "schedule",
        JSON.stringify({
          timezone: timezone.value,
          windows: [{ days: days.filter((d) => d.checked).map((d) => d.value), start: start.value, end: end.value }],
        }),
      );
    try {
      const raw = new RawBody(contacts.value, "text/csv");
      const campaign = await call("post", "/campaigns", {}, { raw, query: query.toString() });
      location.hash = `#/campaigns/${campaign.id}`;
    } catch (e) {
      error.textContent = (e as Error).message;
    }
  }
  return h(
    "form",
    { id: "campaign-form", onsubmit: create },
    h("h2", {}, "New campaign"),
    field("name", name),
    field("assistant or agent", owner),
    field("SIP credential", credential),
    field("caller number", number),
    field("contacts (CSV with a header row: a `to` column, every other column a variable)", contacts),
    file,
    h("label", {}, scheduled, " only within calling hours"),
    h("div", { className: "filters" }, field("time zone (IANA)", timezone), field("from", start), field("to", end)),
    h(
      "div",
      { className: "filters" },
      days.map((d) => h("label", {}, d, " ", d.value)),
    ),
    h(
      "div",
      { className: "filters" },
      field("maxConcurrentCalls", maxConcurrent),
      field("reservedInboundSlots", reserved),
      field("ringTimeoutSeconds", ringTimeout),
    ),
    h(
      "div",
      { className: "filters" },
      field("retry: maxAttempts", attempts),
      reasons.map((r) => h("label", {}, r, " retry on ", r.value)),
      field("delayMinutes", delay),
    ),
    field("voicemail", voicemail),
    field("voicemail message", message),
    h("button", { type: "submit", id: "campaign-create" }, "Create campaign"),
    error,
  );
}
