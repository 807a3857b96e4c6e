// Hook deliveries: read their state and attempts, re-deliver a FAILED one.
import { Elysia, t } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationScoped } from "./access";
import { Envelope, PagedEnvelope, errorResponses } from "../models/common";
import { HookDeliveryModel } from "../models/hook-deliveries";
import { ok, paged } from "../models/envelope";
import * as service from "../services/hook-deliveries";


const tags = ["Hook deliveries"];
const IdParams = t.Object({ vendorId: t.String(), organizationId: t.String(), deliveryId: t.String() });
const idOf = (params: { deliveryId: string }) => assertUuid(params.deliveryId, "hook delivery");

export const hookDeliveriesRoutes = (deps: Deps) =>
  new Elysia({ prefix: `${ORG_PREFIX}/hook-deliveries` })
    .use(organizationScoped(deps))
    .get("", async ({ scope, query }) => paged(await service.listHookDeliveries(deps.db, scope, query)), {
      query: HookDeliveryModel.query,
      response: { 200: PagedEnvelope(HookDeliveryModel.out), ...errorResponses },
      detail: { tags, summary: "List call event hook deliveries; filter by callId, hookId, status or eventType (sortable by id, createdAt, updatedAt, status, eventType)" },
    })
    .get("/:deliveryId", async ({ scope, params }) => ok(await service.getHookDelivery(deps.db, scope, idOf(params))), {
      params: IdParams,
      response: { 200: Envelope(HookDeliveryModel.detail), ...errorResponses },
      detail: { tags, summary: "Read a hook delivery with every attempt of every run" },
    })
    .post(
      "/:deliveryId/retry",
      async ({ scope, params, status }) => status(202, ok(await service.retryHookDelivery(deps.db, scope, idOf(params)), "re-delivery started")),
      {
        params: IdParams,
        response: { 202: Envelope(HookDeliveryModel.detail), ...errorResponses },
        detail: {
          tags,
          summary: "Re-deliver a FAILED delivery",
          description: "Starts the next run (run + 1, a new workflow, the full 20-attempt schedule). 409 unless the delivery is FAILED.",
        },
      },
    );
