CREATE TABLE "api_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"vendor_id" uuid NOT NULL,
	"organization_id" uuid,
	"name" text,
	"token_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"vendor_id" uuid NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vendors" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "llm_generation_strategies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"parameters" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sip_credentials" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"hostname" text NOT NULL,
	"port" integer NOT NULL,
	"username" text NOT NULL,
	"password_encrypted" text NOT NULL,
	"max_agent_tasks" integer DEFAULT 10 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sip_phone_numbers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"vendor_id" uuid NOT NULL,
	"credential_id" uuid NOT NULL,
	"phone_number" text NOT NULL,
	"fallback" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "assistants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"system_prompt" text,
	"system_prompt_greeting" text,
	"llm_strategy_id" uuid,
	"telephone_number_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "call_event_hooks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"assistant_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"type" text NOT NULL,
	"parameters" jsonb NOT NULL,
	"secret_encrypted" text
);
--> statement-breakpoint
CREATE TABLE "extensions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"assistant_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"type" text NOT NULL,
	"name" text,
	"parameters" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_tasks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"call_id" uuid NOT NULL,
	"assistant_id" uuid,
	"credential_id" uuid,
	"phone_number_id" uuid,
	"transport" jsonb NOT NULL,
	"status" text NOT NULL,
	"error" text,
	"bridge_id" text,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_tasks_call_id_unique" UNIQUE("call_id")
);
--> statement-breakpoint
CREATE TABLE "hook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"assistant_id" uuid,
	"hook_id" uuid,
	"hook_key" uuid NOT NULL,
	"call_id" uuid NOT NULL,
	"event_type" text NOT NULL,
	"url" text NOT NULL,
	"method" text NOT NULL,
	"headers" jsonb NOT NULL,
	"secret_encrypted" text,
	"payload" text NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"run" integer DEFAULT 1 NOT NULL,
	"attempt_count" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"dispatched_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hook_delivery_attempts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"delivery_id" uuid NOT NULL,
	"run" integer NOT NULL,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"status_code" integer,
	"error" text,
	"response_excerpt" text,
	"next_attempt_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_vendor_id_vendors_id_fk" FOREIGN KEY ("vendor_id") REFERENCES "public"."vendors"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_vendor_id_vendors_id_fk" FOREIGN KEY ("vendor_id") REFERENCES "public"."vendors"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "llm_generation_strategies" ADD CONSTRAINT "llm_generation_strategies_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sip_credentials" ADD CONSTRAINT "sip_credentials_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sip_phone_numbers" ADD CONSTRAINT "sip_phone_numbers_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sip_phone_numbers" ADD CONSTRAINT "sip_phone_numbers_vendor_id_vendors_id_fk" FOREIGN KEY ("vendor_id") REFERENCES "public"."vendors"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sip_phone_numbers" ADD CONSTRAINT "sip_phone_numbers_credential_id_sip_credentials_id_fk" FOREIGN KEY ("credential_id") REFERENCES "public"."sip_credentials"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assistants" ADD CONSTRAINT "assistants_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assistants" ADD CONSTRAINT "assistants_llm_strategy_id_llm_generation_strategies_id_fk" FOREIGN KEY ("llm_strategy_id") REFERENCES "public"."llm_generation_strategies"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assistants" ADD CONSTRAINT "assistants_telephone_number_id_sip_phone_numbers_id_fk" FOREIGN KEY ("telephone_number_id") REFERENCES "public"."sip_phone_numbers"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_event_hooks" ADD CONSTRAINT "call_event_hooks_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extensions" ADD CONSTRAINT "extensions_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD CONSTRAINT "agent_tasks_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD CONSTRAINT "agent_tasks_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD CONSTRAINT "agent_tasks_credential_id_sip_credentials_id_fk" FOREIGN KEY ("credential_id") REFERENCES "public"."sip_credentials"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_tasks" ADD CONSTRAINT "agent_tasks_phone_number_id_sip_phone_numbers_id_fk" FOREIGN KEY ("phone_number_id") REFERENCES "public"."sip_phone_numbers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hook_deliveries" ADD CONSTRAINT "hook_deliveries_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hook_deliveries" ADD CONSTRAINT "hook_deliveries_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hook_deliveries" ADD CONSTRAINT "hook_deliveries_hook_id_call_event_hooks_id_fk" FOREIGN KEY ("hook_id") REFERENCES "public"."call_event_hooks"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hook_delivery_attempts" ADD CONSTRAINT "hook_delivery_attempts_delivery_id_hook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."hook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_tokens_vendor_idx" ON "api_tokens" USING btree ("vendor_id");--> statement-breakpoint
CREATE INDEX "organizations_vendor_idx" ON "organizations" USING btree ("vendor_id","name");--> statement-breakpoint
CREATE INDEX "llm_strategies_org_idx" ON "llm_generation_strategies" USING btree ("organization_id","name");--> statement-breakpoint
CREATE INDEX "sip_credentials_org_idx" ON "sip_credentials" USING btree ("organization_id","hostname");--> statement-breakpoint
CREATE UNIQUE INDEX "sip_phone_numbers_vendor_number_uq" ON "sip_phone_numbers" USING btree ("vendor_id","phone_number");--> statement-breakpoint
CREATE UNIQUE INDEX "sip_phone_numbers_one_fallback_uq" ON "sip_phone_numbers" USING btree ("credential_id") WHERE "sip_phone_numbers"."fallback";--> statement-breakpoint
CREATE INDEX "sip_phone_numbers_credential_idx" ON "sip_phone_numbers" USING btree ("credential_id","phone_number");--> statement-breakpoint
CREATE INDEX "assistants_org_kind_name_idx" ON "assistants" USING btree ("organization_id","kind","name");--> statement-breakpoint
CREATE UNIQUE INDEX "assistants_telephone_number_uq" ON "assistants" USING btree ("telephone_number_id");--> statement-breakpoint
CREATE INDEX "call_event_hooks_assistant_idx" ON "call_event_hooks" USING btree ("assistant_id","position");--> statement-breakpoint
CREATE INDEX "extensions_assistant_idx" ON "extensions" USING btree ("assistant_id","position");--> statement-breakpoint
CREATE INDEX "agent_tasks_org_created_idx" ON "agent_tasks" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "agent_tasks_active_credential_idx" ON "agent_tasks" USING btree ("credential_id","status");--> statement-breakpoint
CREATE INDEX "agent_tasks_bridge_status_idx" ON "agent_tasks" USING btree ("bridge_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "hook_deliveries_idempotency_uq" ON "hook_deliveries" USING btree ("call_id","hook_key","event_type");--> statement-breakpoint
CREATE INDEX "hook_deliveries_org_created_idx" ON "hook_deliveries" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "hook_deliveries_undispatched_idx" ON "hook_deliveries" USING btree ("dispatched_at");--> statement-breakpoint
CREATE UNIQUE INDEX "hook_delivery_attempts_uq" ON "hook_delivery_attempts" USING btree ("delivery_id","run","attempt");