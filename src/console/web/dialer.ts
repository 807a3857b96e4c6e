// An assistant's page: place an outbound call (POST P/calls) and follow it live by polling its agent
// task once a second: ringing (offered), answered (active), ended and why (endedReason, sipStatus).
import { type AgentTask, call } from "./api";
import { h, poll } from "./dom";

type Kind = "assistants" | "agents";

const pollMs = 1000;
/** What the dialer shows of a task (POST P/calls answers less than a read of the task). */
type TaskState = Pick<AgentTask, "id" | "status" | "endedReason" | "sipStatus">;

/** What a task's state means to the person who placed the call. */
export function callState(task: TaskState): string {
  if (task.status === "offered") return "ringing…";
  if (task.status === "active") return "answered: in the call";
  const sip = task.sipStatus ? ` (SIP ${task.sipStatus})` : "";
  return `ended: ${task.endedReason ?? task.status}${sip}`;
}

export function dialer(kind: Kind, id: string): HTMLElement {
  const to = h("input", { id: "dial-to", placeholder: "+15551230000", size: 20 });
  const variables = h("textarea", { id: "dial-variables", rows: 3 }, "{}");
  const status = h("p", { id: "dial-status" });
  const hangUp = h("button", { type: "button", id: "dial-hangup", disabled: true }, "Hang up");
  const section = h(
    "form",
    { onsubmit: place, id: "dialer" },
    h("h3", {}, "Place a call"),
    h("label", { htmlFor: "dial-to" }, "to (E.164 or sip: URI)"),
    to,
    h("label", { htmlFor: "dial-variables" }, "variables (JSON object of strings)"),
    variables,
    h("button", { type: "submit", id: "dial-start" }, "Call"),
    " ",
    hangUp,
    status,
  );
  let taskId: string | null = null;
  hangUp.addEventListener("click", async () => {
    // 409: it already ended
    if (taskId) await call("post", "/agent-tasks/{agentTaskId}/hangup", { agentTaskId: taskId }).catch(() => {});
  });

  async function place(event: Event) {
    event.preventDefault();
    status.className = "";
    try {
      const owner = kind === "agents" ? { agentId: id } : { assistantId: id };
      const task = await call(
        "post",
        "/calls",
        {},
        {
          body: { ...owner, to: to.value.trim(), variables: JSON.parse(variables.value || "{}") },
        },
      );
      taskId = task.id;
      follow(task);
    } catch (e) {
      status.className = "error";
      status.textContent = (e as Error).message;
    }
  }

  /** Shows the task's state; true once the call has ended. */
  function show(task: TaskState) {
    status.textContent = callState(task);
    const ended = task.status === "completed" || task.status === "failed";
    hangUp.disabled = ended;
    return ended;
  }

  // until the call has ended or the page was left
  function follow(task: TaskState) {
    if (show(task)) return;
    poll(section, pollMs, async () => {
      try {
        task = await call("get", "/agent-tasks/{agentTaskId}", { agentTaskId: task.id });
        return show(task);
      } catch (e) {
        status.textContent = `${callState(task)} (${(e as Error).message})`;
        return false;
      }
    });
  }
  return section;
}
