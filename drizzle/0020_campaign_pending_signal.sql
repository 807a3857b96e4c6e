-- The change a campaign's workflow has yet to be signalled (the API marks it, the worker signals it and
-- clears it: services/campaign-changes.ts), so that the API never waits on Temporal.
ALTER TABLE "campaigns" ADD COLUMN "pending_signal" text;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "signal_seq" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "campaigns_pending_signal_idx" ON "campaigns" USING btree ("updated_at") WHERE "campaigns"."pending_signal" is not null;