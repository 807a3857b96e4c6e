CREATE TABLE "sip_registrations" (
	"credential_id" uuid PRIMARY KEY NOT NULL,
	"owner_bridge_id" text,
	"lease_expires_at" timestamp with time zone NOT NULL,
	"state" text DEFAULT 'unregistered' NOT NULL,
	"last_status" integer,
	"last_error" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sip_registrations" ADD CONSTRAINT "sip_registrations_credential_id_sip_credentials_id_fk" FOREIGN KEY ("credential_id") REFERENCES "public"."sip_credentials"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sip_registrations_owner_idx" ON "sip_registrations" USING btree ("owner_bridge_id");