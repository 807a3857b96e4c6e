-- Until this migration the table was made at run time, on servers with pgvector only, its `embedding` a
-- `vector`: such a table is dropped here, and the API embeds every chunk again at its next start.
DROP TABLE IF EXISTS "knowledge_chunk_embeddings";--> statement-breakpoint
CREATE TABLE "knowledge_chunk_embeddings" (
	"chunk_id" bigint PRIMARY KEY NOT NULL,
	"knowledge_base_id" uuid NOT NULL,
	"model" text NOT NULL,
	"dims" integer NOT NULL,
	"embedding" real[] NOT NULL,
	"bits" bit varying[] NOT NULL,
	"bits_norm" real NOT NULL
);
--> statement-breakpoint
ALTER TABLE "knowledge_chunk_embeddings" ADD CONSTRAINT "knowledge_chunk_embeddings_chunk_id_knowledge_chunks_id_fk" FOREIGN KEY ("chunk_id") REFERENCES "public"."knowledge_chunks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "knowledge_chunk_embeddings_base_idx" ON "knowledge_chunk_embeddings" USING btree ("knowledge_base_id","model");