-- Moves the bodies of existing deliveries into hook_event_bodies, one row per (call, event type):
-- every delivery of one event was written with the same body, so the first one found stands for all.
INSERT INTO "hook_event_bodies" ("organization_id", "call_id", "event_type", "payload", "created_at")
SELECT DISTINCT ON ("call_id", "event_type") "organization_id", "call_id", "event_type", "payload", "created_at"
FROM "hook_deliveries"
WHERE "payload" IS NOT NULL
ORDER BY "call_id", "event_type", "created_at"
ON CONFLICT ("call_id", "event_type") DO NOTHING;
--> statement-breakpoint
UPDATE "hook_deliveries" d
SET "body_id" = b."id"
FROM "hook_event_bodies" b
WHERE b."call_id" = d."call_id" AND b."event_type" = d."event_type" AND d."body_id" IS NULL;
