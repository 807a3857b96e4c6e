CREATE TABLE "hook_event_bodies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"call_id" uuid NOT NULL,
	"event_type" text NOT NULL,
	"payload" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "hook_deliveries" ALTER COLUMN "payload" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "hook_deliveries" ADD COLUMN "body_id" uuid;--> statement-breakpoint
ALTER TABLE "hook_event_bodies" ADD CONSTRAINT "hook_event_bodies_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "hook_event_bodies_uq" ON "hook_event_bodies" USING btree ("call_id","event_type");--> statement-breakpoint
ALTER TABLE "hook_deliveries" ADD CONSTRAINT "hook_deliveries_body_id_hook_event_bodies_id_fk" FOREIGN KEY ("body_id") REFERENCES "public"."hook_event_bodies"("id") ON DELETE cascade ON UPDATE no action;