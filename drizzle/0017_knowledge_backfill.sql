-- knowledge_bases.chunks (0016) starts at 0: count the chunks of knowledge bases uploaded before it
UPDATE "knowledge_bases" b SET "chunks" = (SELECT coalesce(sum(d."chunks"), 0) FROM "knowledge_documents" d WHERE d."knowledge_base_id" = b."id");
