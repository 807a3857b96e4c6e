// SIP (docs/console.md, "SIP"): credentials with their registration state and calls now, each one's
// phone numbers; create, edit and delete both through forms generated from the API's schemas. The
// password is write-only: the API never answers it, and PUT takes it again.
import { type BodyOf, call, type DataOf } from "./api";
import { h } from "./dom";
import { deleteButton, formPage } from "./resource-page";

type Page = [RegExp, (...args: string[]) => Promise<Node>];
export const sipRoutes: Page[] = [
  [/^#\/sip$/, sipPage],
  [/^#\/sip\/new$/, () => credentialPage(null)],
  [/^#\/sip\/([\w-]+)$/, (id) => credentialPage(id!)],
  [/^#\/sip\/([\w-]+)\/numbers\/new$/, (id) => numberPage(id!, null)],
  [/^#\/sip\/([\w-]+)\/numbers\/([\w-]+)$/, (id, number) => numberPage(id!, number!)],
];

type Credential = DataOf<"/sip/credentials/{sipCredentialsId}", "get">;
const numbersOf = (sipCredentialsId: string) =>
  call("get", "/sip/credentials/{sipCredentialsId}/phone-numbers", { sipCredentialsId }, { query: "size=100" });

const registrationText = (c: Credential) =>
  c.registration
    ? `${c.registration.state}${c.registration.lastStatus ? ` (${c.registration.lastStatus})` : ""}${c.registration.lastError ? `: ${c.registration.lastError}` : ""}`
    : "not taken by a bridge yet";

async function sipPage() {
  const credentials = await call("get", "/sip/credentials", {}, { query: "size=100" });
  const numbers = await Promise.all(credentials.map((c) => numbersOf(c.id)));
  return h(
    "div",
    {},
    h("h2", {}, "SIP credentials ", h("a", { href: "#/sip/new", id: "new-credential" }, "New SIP credential")),
    h(
      "table",
      { id: "sip-credentials" },
      h(
        "tr",
        {},
        ["Account", "Registration", "Calls now / maxAgentTasks", "Phone numbers"].map((c) => h("th", {}, c)),
      ),
      credentials.map((c, i) =>
        h(
          "tr",
          { "data-id": c.id },
          h("td", {}, h("a", { href: `#/sip/${c.id}` }, `${c.username}@${c.hostname}:${c.port}`)),
          h("td", { className: `registration state-${c.registration?.state ?? "none"}` }, registrationText(c)),
          h("td", {}, `${c.activeAgentTasks ?? "?"} / ${c.maxAgentTasks}`),
          h(
            "td",
            {},
            numbers[i]!.map((n) => h("div", {}, n.phoneNumber, n.fallback ? " (fallback)" : "")),
          ),
        ),
      ),
    ),
  );
}

async function credentialPage(id: string | null) {
  if (!id)
    return formPage({
      title: "New SIP credential",
      method: "post",
      path: "/sip/credentials",
      value: { port: 5060 },
      async save(body: BodyOf<"/sip/credentials", "post">) {
        const created = await call("post", "/sip/credentials", {}, { body });
        location.hash = `#/sip/${created.id}`;
      },
    });
  const [credential, numbers] = await Promise.all([
    call("get", "/sip/credentials/{sipCredentialsId}", { sipCredentialsId: id }),
    numbersOf(id),
  ]);
  const form = await formPage({
    title: `SIP credential ${credential.username}@${credential.hostname}`,
    method: "put",
    path: "/sip/credentials/{sipCredentialsId}",
    value: credential,
    async save(body: BodyOf<"/sip/credentials/{sipCredentialsId}", "put">) {
      await call("put", "/sip/credentials/{sipCredentialsId}", { sipCredentialsId: id }, { body });
      return "Saved.";
    },
    more: (result) => [
      deleteButton(
        `the SIP credential ${credential.username}@${credential.hostname}`,
        [id, ...numbers.map((n) => n.id)],
        () => call("delete", "/sip/credentials/{sipCredentialsId}", { sipCredentialsId: id }),
        "#/sip",
        result,
      ),
    ],
  });
  return h(
    "div",
    {},
    h(
      "p",
      { className: "note" },
      "registration: ",
      h(
        "span",
        { id: "registration", className: `state-${credential.registration?.state ?? "none"}` },
        registrationText(credential),
      ),
      ` · calls now ${credential.activeAgentTasks} of ${credential.maxAgentTasks}. The password is write-only: type it again to save a change.`,
    ),
    form,
    h("h3", {}, "Phone numbers ", h("a", { href: `#/sip/${id}/numbers/new`, id: "new-number" }, "New phone number")),
    h(
      "table",
      { id: "phone-numbers" },
      h("tr", {}, h("th", {}, "phoneNumber"), h("th", {}, "fallback")),
      numbers.map((n) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/sip/${id}/numbers/${n.id}` }, n.phoneNumber)),
          h("td", {}, n.fallback ? "yes" : ""),
        ),
      ),
    ),
  );
}

async function numberPage(sipCredentialsId: string, id: string | null) {
  const back = `#/sip/${sipCredentialsId}`;
  if (!id)
    return formPage({
      title: "New phone number",
      method: "post",
      path: "/sip/credentials/{sipCredentialsId}/phone-numbers",
      value: {},
      async save(body: BodyOf<"/sip/credentials/{sipCredentialsId}/phone-numbers", "post">) {
        await call("post", "/sip/credentials/{sipCredentialsId}/phone-numbers", { sipCredentialsId }, { body });
        location.hash = back;
      },
    });
  const params = { sipCredentialsId, phoneNumberId: id };
  const number = await call("get", "/sip/credentials/{sipCredentialsId}/phone-numbers/{phoneNumberId}", params);
  return formPage({
    title: `Phone number ${number.phoneNumber}`,
    method: "put",
    path: "/sip/credentials/{sipCredentialsId}/phone-numbers/{phoneNumberId}",
    value: number,
    async save(body: BodyOf<"/sip/credentials/{sipCredentialsId}/phone-numbers/{phoneNumberId}", "put">) {
      await call("put", "/sip/credentials/{sipCredentialsId}/phone-numbers/{phoneNumberId}", params, { body });
      return "Saved.";
    },
    more: (result) => [
      deleteButton(
        `the phone number ${number.phoneNumber}`,
        [id],
        () => call("delete", "/sip/credentials/{sipCredentialsId}/phone-numbers/{phoneNumberId}", params),
        back,
        result,
      ),
    ],
  });
}
