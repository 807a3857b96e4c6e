// Probes, in the envelope like every other route: /healthz (the process answers), /readyz (its dependencies do).
import { Elysia, t } from "elysia";
import type { Deps } from "./deps";
import { Envelope } from "../models/common";
import { ok } from "../models/envelope";

const status = t.Object({ status: t.String(), database: t.Optional(t.Boolean()), temporal: t.Optional(t.Boolean()) });
const Health = Envelope(status);
// a 503 is a failure envelope whose message says which dependency is down, and whose data says it too
const NotReady = t.Object({ ...Health.properties, message: t.String() });

export const healthRoutes = (deps: Deps) =>
  new Elysia()
    .get("/healthz", () => ok({ status: "ok" }), {
      response: Health,
      detail: { tags: ["Health"], summary: "The process is up" },
    })
    .get(
      "/readyz",
      async ({ set }) => {
        const [database, temporal] = await Promise.all([deps.checks.database(), deps.checks.temporal()]);
        if (database && temporal) return ok({ status: "ready", database, temporal });
        set.status = 503;
        const down = [!database && "database", !temporal && "Temporal"].filter(Boolean).join(" and ");
        return { ...ok({ status: "not ready", database, temporal }, `not ready: ${down} unreachable`), success: false };
      },
      {
        response: { 200: Health, 503: NotReady },
        detail: {
          tags: ["Health"],
          summary: "Database and Temporal are reachable (503 with the failing one otherwise)",
        },
      },
    );
