-- The dispatcher makes attempt 1 itself before the run's workflow exists: claimed_at says when a
-- dispatcher took the run, claimed_by the lease key (an advisory lock) of the dispatcher that holds it.
ALTER TABLE "hook_deliveries" ADD COLUMN "claimed_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "hook_deliveries" ADD COLUMN "claimed_by" integer;
