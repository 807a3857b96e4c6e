// The console: a hash-routed single page on the public API (see docs/console.md).
import { type AgentTask, call, consoleConfig, type DataOf, session, signOut } from "./api";
import { h, when } from "./dom";
import { signInPage } from "./sign-in";
import { campaignPage, campaignsPage, newCampaignPage } from "./campaigns";
import { knowledgeBasePage, knowledgeBasesPage } from "./knowledge";
import { startTalk } from "./talk";
import { transferFacts } from "./transfer-view";
import { recordingPlayer } from "./recording-player";
import { transcriptLines } from "./handoff-view";
import { latencyBars, latencyP50 } from "./latency-view";
import { testsRoutes } from "./tests";
import { assistantRoutes, assistantsApi, type Kind } from "./assistants";
import { strategyRoutes } from "./strategies";
import { sipRoutes } from "./sip";

const main = document.getElementById("main")!;
const nav = document.getElementById("nav")!;

const pages: [RegExp, (...args: string[]) => Promise<Node>][] = [
  ...assistantRoutes,
  ...strategyRoutes,
  [/^#\/talk\/(assistants|agents)\/([\w-]+)$/, (kind, id) => talkPage(kind as Kind, id!)],
  [/^#\/calls(?:\?.*)?$/, callsPage],
  [/^#\/calls\/([\w-]+)$/, (id) => callPage(id!)],
  ...sipRoutes,
  [/^#\/knowledge$/, knowledgeBasesPage],
  [/^#\/knowledge\/([\w-]+)(?:\?(.*))?$/, (id, query) => knowledgeBasePage(id!, query)],
  ...testsRoutes,
  [/^#\/campaigns$/, campaignsPage],
  [/^#\/campaigns\/new$/, newCampaignPage],
  [/^#\/campaigns\/([\w-]+)(?:\?.*)?$/, (id) => campaignPage(id!)],
];

async function render() {
  if (!session()) {
    nav.replaceChildren();
    return show(signInPage(render));
  }
  if (!location.hash || location.hash === "#/") location.hash = "#/assistants";
  nav.replaceChildren(
    ...[
      ["#/assistants", "Assistants"],
      ["#/strategies", "Strategies"],
      ["#/calls", "Calls"],
      ["#/campaigns", "Campaigns"],
      ["#/sip", "SIP"],
      ["#/knowledge", "Knowledge"],
      ["#/tests", "Tests"],
    ].map(([href, label]) => h("a", { href, className: location.hash.startsWith(href!) ? "active" : "" }, label)),
    h("a", { href: "#/", onclick: signOutAndRender }, "Sign out"),
  );
  for (const [pattern, page] of pages) {
    const match = pattern.exec(location.hash);
    if (!match) continue;
    try {
      return show(await page(...match.slice(1)));
    } catch (error) {
      return show(h("p", { className: "error" }, (error as Error).message));
    }
  }
  show(h("p", {}, "Not found."));
}

function signOutAndRender() {
  signOut();
  void render();
}

function show(node: Node) {
  main.replaceChildren(node);
}

async function talkPage(kind: Kind, id: string) {
  const [a, config] = await Promise.all([assistantsApi.get(kind, id), consoleConfig()]);
  const transcript = h("div", { className: "transcript", id: "transcript" });
  const status = h("p", { id: "talk-status" }, "Not connected.");
  const level = h("meter", { id: "agent-level", min: 0, max: 0.3, value: 0 });
  level.dataset.peak = "0";
  const partial: Record<string, HTMLElement | null> = { USER: null, ASSISTANT: null };
  const start = h("button", { id: "talk-start" }, "Start call");
  const hangUp = h("button", { id: "talk-hangup", disabled: true }, "Hang up");
  let call: Awaited<ReturnType<typeof startTalk>> | null = null;

  start.onclick = async () => {
    start.disabled = true;
    status.textContent = "Starting…";
    try {
      call = await startTalk(
        config.bridgeUrl,
        { kind, id },
        {
          onTranscript(role, text, final) {
            let line = partial[role];
            if (!line) {
              line = h("div", { className: `msg ${role.toLowerCase()}` });
              partial[role] = line;
              transcript.append(line);
            }
            line.replaceChildren(h("span", { className: "role" }, role === "USER" ? "You" : "Agent"), text);
            line.classList.toggle("partial", !final);
            if (final) partial[role] = null;
          },
          onTool: (text) => transcript.append(h("div", { className: "msg tool" }, text)),
          onStatus: (text) => (status.textContent = text),
          onLevel(value) {
            level.value = value;
            if (value > Number(level.dataset.peak)) level.dataset.peak = String(value);
          },
          onEnded(reason) {
            status.textContent = `Call ended: ${reason}`;
            status.dataset.ended = reason;
            hangUp.disabled = true;
            start.disabled = false;
          },
        },
      );
      hangUp.disabled = false;
    } catch (e) {
      status.textContent = `Could not start: ${(e as Error).message}`;
      start.disabled = false;
    }
  };
  hangUp.onclick = () => call?.hangUp();
  return h(
    "div",
    {},
    h("h2", {}, "Talk to ", a.name),
    h("div", {}, start, hangUp, " agent level ", level),
    status,
    transcript,
  );
}

type Owner = { kind: Kind; name: string };

/** Assistants and agents by id, to show names instead of ids. */
async function owners(): Promise<Map<string, Owner>> {
  const [assistants, agents] = await Promise.all([assistantsApi.list("assistants"), assistantsApi.list("agents")]);
  const byId = new Map<string, Owner>();
  for (const a of assistants) byId.set(a.id, { kind: "assistants", name: a.name });
  for (const a of agents) byId.set(a.id, { kind: "agents", name: a.name });
  return byId;
}

function ownerLink(byId: Map<string, Owner>, task: { assistantId: string | null; agentId: string | null }) {
  const id = task.assistantId ?? task.agentId;
  const owner = id ? byId.get(id) : undefined;
  if (!id) return "(deleted)";
  return owner ? h("a", { href: `#/${owner.kind}/${id}` }, owner.name) : id;
}

async function callsPage() {
  const params = new URLSearchParams(location.hash.split("?")[1] ?? "");
  const filter = (name: string, el: HTMLInputElement | HTMLSelectElement) => {
    el.value = params.get(name) ?? "";
    return h("label", {}, name, " ", el);
  };
  const byId = await owners();
  const status = h(
    "select",
    { name: "status" },
    ["", "offered", "active", "completed", "failed"].map((s) => h("option", { value: s }, s || "any")),
  );
  const transport = h(
    "select",
    { name: "transport" },
    ["", "websocket", "sip"].map((s) => h("option", { value: s }, s || "any")),
  );
  // the option's value names the filter: assistantId for an assistant, agentId for an agent
  const owner = h(
    "select",
    { name: "owner" },
    h("option", { value: "" }, "any"),
    [...byId].map(([id, o]) =>
      h(
        "option",
        { value: `${o.kind === "agents" ? "agentId" : "assistantId"}:${id}` },
        `${o.name} (${o.kind.slice(0, -1)})`,
      ),
    ),
  );
  const after = h("input", { name: "createdAfter", type: "datetime-local" });
  const before = h("input", { name: "createdBefore", type: "datetime-local" });
  const query = new URLSearchParams({ size: "50", sort: "createdAt,desc" });
  for (const [key, value] of params) {
    if (!value) continue;
    if (key === "owner") query.set(value.split(":")[0]!, value.split(":")[1]!);
    else query.set(key, key.startsWith("created") ? new Date(value).toISOString() : value);
  }
  const tasks = await call("get", "/agent-tasks", {}, { query: query.toString() });
  const apply = (event: Event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const el of [status, transport, owner, after, before]) if (el.value) next.set(el.name, el.value);
    location.hash = `#/calls?${next}`;
  };
  return h(
    "div",
    {},
    h("h2", {}, "Calls"),
    h(
      "form",
      { className: "filters", onsubmit: apply },
      filter("status", status),
      filter("transport", transport),
      filter("owner", owner),
      filter("createdAfter", after),
      filter("createdBefore", before),
      h("button", { type: "submit" }, "Filter"),
    ),
    h(
      "table",
      { id: "calls-list" },
      h(
        "tr",
        {},
        ["Created", "Status", "Transport", "Assistant/agent", "Duration", "Voice-to-voice p50"].map((c) =>
          h("th", {}, c),
        ),
      ),
      tasks.map((t) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/calls/${t.id}` }, when(t.createdAt))),
          h("td", { className: `state-${t.status}` }, t.status),
          h("td", {}, transportText(t.transport)),
          h("td", {}, ownerLink(byId, t)),
          h(
            "td",
            {},
            t.startedAt && t.endedAt ? `${Math.round((Date.parse(t.endedAt) - Date.parse(t.startedAt)) / 1000)} s` : "",
          ),
          h("td", { className: "latency-p50" }, latencyP50(t.latency)),
        ),
      ),
    ),
  );
}

const transportText = (t: { type: string; callingNumber?: string; calledNumber?: string }) =>
  [t.type, t.callingNumber && `from ${t.callingNumber}`, t.calledNumber && `to ${t.calledNumber}`]
    .filter(Boolean)
    .join(" ");

/** call_analysis' result: success and why, then the data (or why there is none). */
const analysisText = (a: AgentTask["analysis"]) =>
  !a
    ? ""
    : [
        a.success === true ? "success" : a.success === false ? "not a success" : "",
        a.successReason,
        a.error ? `error: ${a.error}` : `data: ${JSON.stringify(a.data)}`,
      ]
        .filter(Boolean)
        .join(" · ");

async function callPage(id: string) {
  const [task, byId] = await Promise.all([call("get", "/agent-tasks/{agentTaskId}", { agentTaskId: id }), owners()]);
  // the transfer tool's settings say how a transfer went out
  const owner = task.assistantId
    ? assistantsApi.get("assistants", task.assistantId)
    : task.agentId
      ? assistantsApi.get("agents", task.agentId)
      : null;
  const extensions = (await owner?.catch(() => null))?.extensions ?? [];
  const deliveries = await call("get", "/hook-deliveries", {}, { query: `callId=${task.callId}&size=100` });
  const details = await Promise.all(
    deliveries.map((d) => call("get", "/hook-deliveries/{deliveryId}", { deliveryId: d.id })),
  );
  const messages = task.messages ?? [];
  return h(
    "div",
    {},
    h("h2", {}, "Call ", task.callId),
    h(
      "table",
      { id: "call-facts" },
      [
        ["Status", h("span", { className: `state-${task.status}` }, task.status, task.error ? ` (${task.error})` : "")],
        ["Transport", transportText(task.transport)],
        ["Assistant/agent", ownerLink(byId, task)],
        ["SIP credential / number", [task.credentialId, task.phoneNumberId].filter(Boolean).join(" / ")],
        ["Started", when(task.startedAt)],
        ["Ended", when(task.endedAt)],
        [
          "Ended because",
          task.endedReason ? `${task.endedReason}${task.sipStatus ? ` (SIP ${task.sipStatus})` : ""}` : "",
        ],
        ["Transfer", transferFacts(task, messages, extensions) ?? ""],
        ["Summary", task.summary ?? task.shortSummary ?? ""],
        ["Analysis", h("span", { id: "call-analysis" }, analysisText(task.analysis))],
        ["Variables", h("code", { id: "call-variables" }, task.variables ? JSON.stringify(task.variables) : "")],
      ].map(([k, v]) => h("tr", {}, h("th", {}, k as string), h("td", {}, v as Node))),
    ),
    h("h3", {}, "Recording"),
    task.recording
      ? recordingPlayer(id)
      : h("p", { className: "note" }, "No recording (the call has none, or it is past its retention)."),
    h("h3", {}, "Latency per turn"),
    latencyBars(task.latency) ?? h("p", { className: "note" }, "No turns measured (yet)."),
    h("h3", {}, "Transcript and tool calls"),
    h(
      "div",
      { className: "transcript", id: "call-messages" },
      task.messages === null
        ? h("p", { className: "note" }, "No messages kept.")
        : transcriptLines(messages, task.handoffs, (assistantId) => byId.get(assistantId)?.name ?? assistantId),
    ),
    h("h3", {}, "Hook deliveries"),
    h(
      "table",
      { id: "hook-deliveries" },
      h(
        "tr",
        {},
        ["Event", "URL", "State", "Attempts", ""].map((c) => h("th", {}, c)),
      ),
      details.map(deliveryRow),
    ),
  );
}

function deliveryRow(d: DataOf<"/hook-deliveries/{deliveryId}", "get">) {
  const retry = h("button", { className: "retry" }, "Retry");
  retry.onclick = async () => {
    retry.disabled = true;
    try {
      await call("post", "/hook-deliveries/{deliveryId}/retry", { deliveryId: d.id });
      await render();
    } catch (e) {
      retry.replaceWith(h("span", { className: "error" }, (e as Error).message));
    }
  };
  return h(
    "tr",
    {},
    h("td", {}, d.eventType),
    h("td", {}, `${d.method} ${d.url}`),
    h("td", { className: `state-${d.status}` }, d.status),
    h(
      "td",
      {},
      d.attempts.map((a) =>
        h(
          "div",
          {},
          `run ${a.run} #${a.attempt} ${when(a.startedAt)}: ${a.statusCode ?? a.error ?? ""} (${a.durationMs} ms)`,
        ),
      ),
    ),
    h("td", {}, d.status === "FAILED" ? retry : ""),
  );
}

addEventListener("hashchange", () => void render());
void render();
