-- The dispatcher claims new runs oldest first through this index, so a claim costs the same whatever
-- the backlog of runs already claimed and waiting for their workflow (it scanned them all before).
-- (The snapshot taken with this migration also records 0011's claimed_at/claimed_by columns.)
CREATE INDEX "hook_deliveries_unclaimed_idx" ON "hook_deliveries" USING btree ("created_at") WHERE "hook_deliveries"."dispatched_at" is null and "hook_deliveries"."claimed_at" is null;
