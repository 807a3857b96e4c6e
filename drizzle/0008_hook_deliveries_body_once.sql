ALTER TABLE "hook_deliveries" ALTER COLUMN "body_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "hook_deliveries" DROP COLUMN "payload";