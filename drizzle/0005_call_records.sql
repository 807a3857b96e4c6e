CREATE TABLE "call_recordings" (
	"call_id" uuid PRIMARY KEY NOT NULL,
	"content_type" text NOT NULL,
	"audio" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "call_records" (
	"call_id" uuid PRIMARY KEY NOT NULL,
	"messages" jsonb NOT NULL,
	"short_summary" text,
	"summary" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "call_recordings" ADD CONSTRAINT "call_recordings_call_id_agent_tasks_call_id_fk" FOREIGN KEY ("call_id") REFERENCES "public"."agent_tasks"("call_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_records" ADD CONSTRAINT "call_records_call_id_agent_tasks_call_id_fk" FOREIGN KEY ("call_id") REFERENCES "public"."agent_tasks"("call_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "call_recordings_created_idx" ON "call_recordings" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "call_records_created_idx" ON "call_records" USING btree ("created_at");