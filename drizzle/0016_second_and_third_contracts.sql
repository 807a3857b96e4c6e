CREATE TABLE "test_results" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"iteration" integer NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"criteria" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"agent_task_id" uuid,
	"metrics" jsonb,
	"hooks" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"transcript" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" text,
	"call_secret_hash" text,
	"call_id" uuid,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	CONSTRAINT "test_results_run_position_iteration" UNIQUE("run_id","position","iteration")
);
--> statement-breakpoint
CREATE TABLE "test_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"assistant_id" uuid NOT NULL,
	"target_kind" text NOT NULL,
	"suite_id" uuid,
	"modality" text NOT NULL,
	"concurrency" integer NOT NULL,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"scenarios" jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"verdict" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "test_scenarios" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"tags" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"kind" text NOT NULL,
	"definition" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "test_suite_scenarios" (
	"suite_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"scenario_id" uuid NOT NULL,
	CONSTRAINT "test_suite_scenarios_suite_id_position_pk" PRIMARY KEY("suite_id","position")
);
--> statement-breakpoint
CREATE TABLE "test_suites" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" text NOT NULL,
	"repeat" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaign_contacts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"campaign_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"to" text NOT NULL,
	"variables" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_ended_reason" text,
	"agent_task_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" text NOT NULL,
	"assistant_id" uuid NOT NULL,
	"phone_number_id" uuid NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"max_concurrent_calls" integer NOT NULL,
	"reserved_inbound_slots" integer NOT NULL,
	"schedule" jsonb,
	"retry" jsonb NOT NULL,
	"voicemail" jsonb NOT NULL,
	"ring_timeout_seconds" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "knowledge_bases" ADD COLUMN "chunks" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD COLUMN "test_run_id" uuid;--> statement-breakpoint
ALTER TABLE "test_results" ADD CONSTRAINT "test_results_run_id_test_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."test_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "test_runs" ADD CONSTRAINT "test_runs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "test_scenarios" ADD CONSTRAINT "test_scenarios_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "test_suite_scenarios" ADD CONSTRAINT "test_suite_scenarios_suite_id_test_suites_id_fk" FOREIGN KEY ("suite_id") REFERENCES "public"."test_suites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "test_suite_scenarios" ADD CONSTRAINT "test_suite_scenarios_scenario_id_test_scenarios_id_fk" FOREIGN KEY ("scenario_id") REFERENCES "public"."test_scenarios"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "test_suites" ADD CONSTRAINT "test_suites_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_contacts" ADD CONSTRAINT "campaign_contacts_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_phone_number_id_sip_phone_numbers_id_fk" FOREIGN KEY ("phone_number_id") REFERENCES "public"."sip_phone_numbers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "test_runs_org_created_idx" ON "test_runs" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "test_runs_queued_idx" ON "test_runs" USING btree ("status") WHERE status = 'queued';--> statement-breakpoint
CREATE INDEX "test_scenarios_org_name_idx" ON "test_scenarios" USING btree ("organization_id","name");--> statement-breakpoint
CREATE INDEX "test_suite_scenarios_scenario_idx" ON "test_suite_scenarios" USING btree ("scenario_id");--> statement-breakpoint
CREATE INDEX "test_suites_org_name_idx" ON "test_suites" USING btree ("organization_id","name");--> statement-breakpoint
CREATE INDEX "campaign_contacts_campaign_status_idx" ON "campaign_contacts" USING btree ("campaign_id","status","next_attempt_at","position");--> statement-breakpoint
CREATE INDEX "campaign_contacts_campaign_position_idx" ON "campaign_contacts" USING btree ("campaign_id","position");--> statement-breakpoint
CREATE INDEX "campaigns_org_created_idx" ON "campaigns" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "agent_tasks_test_run_idx" ON "agent_tasks" USING btree ("test_run_id");