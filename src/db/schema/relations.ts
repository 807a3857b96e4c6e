import { relations } from "drizzle-orm";
import { assistants, callEventHooks, extensions } from "./assistants";
import { hookDeliveries, hookDeliveryAttempts } from "./hooks";

export const assistantsRelations = relations(assistants, ({ many }) => ({
  extensions: many(extensions),
  callEventHooks: many(callEventHooks),
}));
export const extensionsRelations = relations(extensions, ({ one }) => ({
  assistant: one(assistants, { fields: [extensions.assistantId], references: [assistants.id] }),
}));
export const callEventHooksRelations = relations(callEventHooks, ({ one }) => ({
  assistant: one(assistants, { fields: [callEventHooks.assistantId], references: [assistants.id] }),
}));
export const hookDeliveriesRelations = relations(hookDeliveries, ({ many }) => ({
  attempts: many(hookDeliveryAttempts),
}));
export const hookDeliveryAttemptsRelations = relations(hookDeliveryAttempts, ({ one }) => ({
  delivery: one(hookDeliveries, { fields: [hookDeliveryAttempts.deliveryId], references: [hookDeliveries.id] }),
}));
