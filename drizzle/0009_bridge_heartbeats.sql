CREATE TABLE "bridge_heartbeats" (
	"bridge_id" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "bridge_heartbeats_expires_idx" ON "bridge_heartbeats" USING btree ("expires_at");