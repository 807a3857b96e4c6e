// Sign-in with the token alone: GET /api/v1/token says which vendor and organization it reaches. A vendor
// token with several organizations lets the user pick one; the admin token is refused (it has no tenant).
import { getAs, signIn } from "./api";
import { h } from "./dom";

type TokenScope = Awaited<ReturnType<typeof tokenScope>>;
const tokenScope = (token: string) => getAs(token, "/api/v1/token", {});

/** The form; `signedIn` runs once the session is stored. */
export function signInPage(signedIn: () => Promise<void>) {
  const token = h("input", { id: "token", type: "password", size: 60, required: true });
  const org = h("select", { id: "organization-id", hidden: true });
  const orgLabel = h("label", { htmlFor: "organization-id", hidden: true }, "Organization");
  const error = h("p", { className: "error" });

  async function organizationOf(value: string, reach: TokenScope): Promise<string | null> {
    if (reach.scope === "organization") return reach.organizationId;
    if (reach.scope === "admin")
      throw new Error("the admin token has no organization: use a vendor or organization token");
    if (!org.hidden && org.value) return org.value;
    const orgs = await getAs(
      value,
      "/api/v1/vendors/{vendorId}/organizations",
      { vendorId: reach.vendorId! },
      "size=100",
    );
    if (orgs.length === 0) throw new Error("this vendor has no organization yet");
    if (orgs.length === 1) return orgs[0]!.id;
    org.replaceChildren(...orgs.map((o) => h("option", { value: o.id }, `${o.name} (${o.id})`)));
    org.hidden = orgLabel.hidden = false;
    return null; // the user picks one and submits again
  }

  return h(
    "form",
    {
      id: "sign-in",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        error.textContent = "";
        const value = token.value.trim();
        try {
          const reach = await tokenScope(value);
          const organizationId = await organizationOf(value, reach);
          if (!organizationId) return;
          signIn({ token: value, vendorId: reach.vendorId!, organizationId });
          location.hash = "#/assistants";
          await signedIn();
        } catch (e) {
          error.textContent = (e as Error).message;
        }
      },
    },
    h("h2", {}, "Sign in"),
    h("p", { className: "note" }, "An API token of the organization (or its vendor). It stays in this tab only."),
    h("label", { htmlFor: "token" }, "API token"),
    token,
    orgLabel,
    org,
    h("div", {}, h("button", { type: "submit" }, "Sign in")),
    error,
  );
}
