ALTER TABLE "agent_tasks" ADD COLUMN "direction" text DEFAULT 'inbound' NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "ended_reason" text;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "sip_status" integer;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "variables" jsonb;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "transferred_to" text;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "campaign_id" uuid;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "analysis" jsonb;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "dial" jsonb;