// Hook deliveries as the API shows them: state, attempts, and the list filters.
import { t } from "elysia";
import { callEventTypes, deliveryStatuses } from "../db/schema";
import { DateTimeIn, Enum, Integer, Nullable, Strict, Uuid, pageQueryFields } from "./common";

const Delivery = {
  id: Uuid,
  callId: Uuid,
  eventType: t.String(),
  hookId: Uuid,
  assistantId: Nullable(Uuid),
  url: t.String(),
  method: t.String(),
  status: Enum(deliveryStatuses),
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
  error: Nullable(
    t.String({ description: "why the attempt failed without a 2xx: time-out, refused connection, redirect" }),
  ),
  responseExcerpt: Nullable(t.String({ description: "the first 1 KiB of the response body" })),
  nextAttemptAt: Nullable(t.Date()),
});

export const HookDeliveryModel = {
  query: t.Object(
    {
      ...pageQueryFields,
      callId: t.Optional(Uuid),
      hookId: t.Optional(Uuid),
      status: t.Optional(Enum(deliveryStatuses)),
      eventType: t.Optional(Enum(callEventTypes)),
    },
    Strict,
  ),
  out: t.Object(Delivery),
  detail: t.Object({ ...Delivery, attempts: t.Array(Attempt) }),
};
export type HookDeliveryQuery = typeof HookDeliveryModel.query.static;

// A window of delivery creation times: [createdAfter, createdBefore), createdBefore defaulting to now.
const Window = {
  createdAfter: DateTimeIn("deliveries created at or after this time, earlier than createdBefore"),
  createdBefore: t.Optional(DateTimeIn("deliveries created before this time, later than createdAfter (default: now)")),
  hookId: t.Optional(Uuid),
};

const StatusCounts = t.Object({
  PENDING: Integer({ minimum: 0 }),
  SUCCEEDED: Integer({ minimum: 0 }),
  FAILED: Integer({ minimum: 0 }),
});

export const HookDeliveryRecoverModel = {
  body: t.Object(Window, Strict),
  out: t.Object({
    restarted: Integer({ minimum: 0, description: "FAILED deliveries in the window started again" }),
    deliveryIds: t.Array(Uuid),
  }),
};
export type HookDeliveryWindow = typeof HookDeliveryRecoverModel.body.static;

export const HookDeliveryStatsModel = {
  query: t.Object(Window, Strict),
  out: t.Object({
    createdAfter: t.Date(),
    createdBefore: t.Date(),
    total: Integer({ minimum: 0 }),
    byStatus: StatusCounts,
    hooks: t.Array(
      t.Object({
        hookId: Uuid,
        total: Integer({ minimum: 0 }),
        byStatus: StatusCounts,
        successRate: Nullable(
          t.Number({
            minimum: 0,
            maximum: 1,
            description: "SUCCEEDED / (SUCCEEDED + FAILED); null while none has finished",
          }),
        ),
      }),
    ),
  }),
};
