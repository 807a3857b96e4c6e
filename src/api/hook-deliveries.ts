// Hook deliveries: read their state and attempts, re-deliver a FAILED one.
import { t } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { Envelope, errorResponses } from "../models/common";
import { ok } from "../models/envelope";
import { HookDeliveryModel, HookDeliveryRecoverModel, HookDeliveryStatsModel } from "../models/hook-deliveries";
import * as service from "../services/hook-deliveries";

const tags = ["Hook deliveries"];
const OrgParams = t.Object({ vendorId: t.String(), organizationId: t.String() });

export const hookDeliveriesRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: `${ORG_PREFIX}/hook-deliveries`,
    access: organizationAccess(deps),
    tag: tags[0]!,
    what: "hook delivery",
    idParam: "deliveryId",
    sortable: ["id", "createdAt", "updatedAt", "status", "eventType"],
    notes: { list: "Call event hook deliveries; filter by callId, hookId, status or eventType" },
    models: HookDeliveryModel,
    service: {
      list: ({ scope }, _, query) => service.listHookDeliveries(deps.db, scope, query),
      get: ({ scope }, _, id) => service.getHookDelivery(deps.db, scope, id),
    },
  })
    .post(
      "/:deliveryId/retry",
      async ({ access, params, status }) => {
        const id = assertUuid(params.deliveryId, "hook delivery");
        return status(202, ok(await service.retryHookDelivery(deps.db, access.scope, id), "re-delivery started"));
      },
      {
        params: t.Object({ vendorId: t.String(), organizationId: t.String(), deliveryId: t.String() }),
        response: { 202: Envelope(HookDeliveryModel.detail), ...errorResponses },
        detail: {
          tags,
          summary: "Re-deliver a FAILED delivery",
          description:
            "Starts the next run (run + 1, a new workflow, the full 20-attempt schedule). 409 unless the delivery is FAILED.",
        },
      },
    )
    .post(
      "/recover",
      async ({ access, body, status }) =>
        status(202, ok(await service.recoverHookDeliveries(deps.db, access.scope, body), "re-deliveries started")),
      {
        params: OrgParams,
        body: HookDeliveryRecoverModel.body,
        response: { 202: Envelope(HookDeliveryRecoverModel.out), ...errorResponses },
        detail: {
          tags,
          summary: "Re-deliver every FAILED delivery of a time window",
          description:
            "Starts the next run of each FAILED delivery created in [createdAfter, createdBefore), of one hook when " +
            "hookId is given, exactly as the single retry does. Deliveries in other states are left alone.",
        },
      },
    )
    .get("/stats", async ({ access, query }) => ok(await service.hookDeliveryStats(deps.db, access.scope, query)), {
      params: OrgParams,
      query: HookDeliveryStatsModel.query,
      response: { 200: Envelope(HookDeliveryStatsModel.out), ...errorResponses },
      detail: {
        tags,
        summary: "Delivery counts by state and success rate per hook over a time window",
        description: "Over deliveries created in [createdAfter, createdBefore); successRate counts finished ones only.",
      },
    });
