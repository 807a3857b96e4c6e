// Probes, in the envelope like every other route: /healthz (the process answers), /readyz (its dependencies do).
import { Elysia, t } from "elysia";
import type { Deps } from "./deps";
import { Envelope } from "../models/common";
import { ok } from "../models/envelope";

const Health = Envelope(
  t.Object({ status: t.String(), database: t.Optional(t.Boolean()), temporal: t.Optional(t.Boolean()) }),
);

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
        const ready = database && temporal;
        if (!ready) set.status = 503;
        // a 503 is a failure envelope that still carries which dependency is down
        return { ...ok({ status: ready ? "ready" : "not ready", database, temporal }), success: ready };
      },
      {
        response: { 200: Health, 503: Health },
        detail: {
          tags: ["Health"],
          summary: "Database and Temporal are reachable (503 with the failing one otherwise)",
        },
      },
    );
