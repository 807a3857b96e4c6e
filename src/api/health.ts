import { Elysia, t } from "elysia";
import type { Deps } from "./deps";

const Health = t.Object({ status: t.String(), database: t.Optional(t.Boolean()), temporal: t.Optional(t.Boolean()) });

export const healthRoutes = (deps: Deps) =>
  new Elysia()
    .get("/healthz", () => ({ status: "ok" }), { response: Health, detail: { tags: ["Health"], summary: "The process is up" } })
    .get(
      "/readyz",
      async ({ set }) => {
        const [database, temporal] = await Promise.all([deps.checks.database(), deps.checks.temporal()]);
        if (!database || !temporal) set.status = 503;
        return { status: database && temporal ? "ready" : "not ready", database, temporal };
      },
      { response: { 200: Health, 503: Health }, detail: { tags: ["Health"], summary: "Database and Temporal are reachable" } },
    );
