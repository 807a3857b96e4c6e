// GET /api/v1/token: what the presented token may reach, so a client (the console) needs nothing but the
// token to find its vendor and organization. Never the token itself or its hash.
import { Elysia, t } from "elysia";
import type { Deps } from "./deps";
import { Enum, Envelope, errorResponses, Nullable, Uuid } from "../models/common";
import { ok } from "../models/envelope";

const TokenScope = t.Object({
  scope: Enum(["admin", "vendor", "organization"], {
    description: "admin: everything; vendor: the vendor and all its organizations; organization: that one only",
  }),
  tokenId: Nullable(Uuid),
  vendorId: Nullable(Uuid),
  organizationId: Nullable(Uuid),
});

export const tokenRoutes = (deps: Deps) =>
  new Elysia().get(
    "/api/v1/token",
    async ({ request }) => {
      const principal = await deps.tokens.resolve(request.headers.get("authorization"));
      if (principal.kind === "admin")
        return ok({ scope: principal.kind, tokenId: null, vendorId: null, organizationId: null });
      const organizationId = principal.kind === "organization" ? principal.organizationId : null;
      return ok({ scope: principal.kind, tokenId: principal.tokenId, vendorId: principal.vendorId, organizationId });
    },
    {
      response: { 200: Envelope(TokenScope), 401: errorResponses[401] },
      detail: { tags: ["API tokens"], summary: "What the presented token may reach (its vendor and organization)" },
    },
  );
