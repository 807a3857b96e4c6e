DROP INDEX "assistants_org_kind_name_idx";--> statement-breakpoint
CREATE INDEX "assistants_org_kind_name_id_idx" ON "assistants" USING btree ("organization_id","kind","name","id");--> statement-breakpoint
CREATE INDEX "assistants_org_kind_created_id_idx" ON "assistants" USING btree ("organization_id","kind","created_at" DESC NULLS FIRST,"id");