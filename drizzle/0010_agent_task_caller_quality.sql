ALTER TABLE "agent_tasks" ADD COLUMN "caller_jitter_ms" real;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "caller_packets_lost" integer;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "round_trip_ms" real;