// Custom search attributes that make a delivery easy to find in the Temporal Web UI.
// They must be registered on the server first (the dev server gets them as --search-attribute flags).
import { defineSearchAttributeKey, SearchAttributeType } from "@temporalio/common";

export const hookCallId = defineSearchAttributeKey("HookCallId", SearchAttributeType.KEYWORD);
export const hookEventType = defineSearchAttributeKey("HookEventType", SearchAttributeType.KEYWORD);
export const hookId = defineSearchAttributeKey("HookId", SearchAttributeType.KEYWORD);
export const hookOrganizationId = defineSearchAttributeKey("HookOrganizationId", SearchAttributeType.KEYWORD);
export const hookStatus = defineSearchAttributeKey("HookStatus", SearchAttributeType.KEYWORD);

export const hookSearchAttributeKeys = [hookCallId, hookEventType, hookId, hookOrganizationId, hookStatus];
