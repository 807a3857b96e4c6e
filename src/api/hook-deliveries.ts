// Hook deliveries: read their state and attempts, re-deliver a FAILED one.
import { Elysia, t } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationScoped } from "./access";
import { Envelope, Integer, Nullable, PagedEnvelope, Strict, Uuid, errorResponses, pageQueryFields } from "./schemas";
import { ok, paged } from "./reply";
import { deliveryStatuses } from "../db/schema";
import { callEventTypes } from "../events/payloads";
import * as service from "../services/hook-deliveries";

// not t.UnionEnum: inside t.Optional in a query it fills in its first value when the parameter is absent
const OneOf = <T extends string>(values: readonly T[]) =>
  t.Enum(Object.fromEntries(values.map((v) => [v, v])) as { [K in T]: K });

const Delivery = {
  id: Uuid,
  callId: Uuid,
  eventType: t.String(),
  hookId: Uuid,
  assistantId: Nullable(Uuid),
  url: t.String(),
  method: t.String(),
  status: OneOf(deliveryStatuses),
  run: Integer({ minimum: 1, description: "1 for the first run; each manual retry starts the next" }),
  attemptCount: Integer({ minimum: 0, maximum: 20, description: "attempts made in the current run" }),
  nextAttemptAt: Nullable(t.Date()),
  workflowId: t.String({ description: "Temporal workflow id of the current run (search it in the Temporal Web UI)" }),
  createdAt: t.Date(),
  updatedAt: t.Date(),
};

const Attempt = t.Object({
  run: Integer({ minimum: 1 }),
  attempt: Integer({ minimum: 1, maximum: 20 }),
  startedAt: t.Date(),
  durationMs: Integer({ minimum: 0 }),
  statusCode: Nullable(Integer()),
  error: Nullable(t.String({ description: "why the attempt failed without a 2xx: time-out, refused connection, redirect" })),
  responseExcerpt: Nullable(t.String({ description: "the first 1 KiB of the response body" })),
  nextAttemptAt: Nullable(t.Date()),
});

export const HookDeliveryModel = {
  query: t.Object(
    {
      ...pageQueryFields,
      callId: t.Optional(Uuid),
      hookId: t.Optional(Uuid),
      status: t.Optional(OneOf(deliveryStatuses)),
      eventType: t.Optional(OneOf(callEventTypes)),
    },
    Strict,
  ),
  out: t.Object(Delivery),
  detail: t.Object({ ...Delivery, attempts: t.Array(Attempt) }),
};
export type HookDeliveryQuery = typeof HookDeliveryModel.query.static;

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
