// Probes, in the envelope like every other route: /healthz (the process answers), /readyz (its schema
// is migrated and its dependencies answer).
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
        // the schema counts as a dependency: until this process's migrations are done its routes answer 503
        const migrated = deps.started();
        if (migrated && database && temporal) return ok({ status: "ready", database, temporal });
        set.status = 503;
        const down = [!database && "database", !temporal && "Temporal"].filter(Boolean).join(" and ");
        const message = down ? `not ready: ${down} unreachable` : "not ready: migrations not applied yet";
        return { ...ok({ status: migrated ? "not ready" : "starting", database, temporal }, message), success: false };
      },
      {
        response: { 200: Health, 503: NotReady },
        detail: {
          tags: ["Health"],
          summary: "The schema is migrated, database and Temporal are reachable (503 with what is missing otherwise)",
        },
      },
    );
