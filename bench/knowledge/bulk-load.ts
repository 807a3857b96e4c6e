// Loads many generated documents into one knowledge base fast (the bench's 100k chunks): chunked as
// an upload is, then a few thousand chunks per INSERT … SELECT, and the base's word counts recounted
// once at the end. addDocument's one transaction per document would take minutes here.
import { sql } from "drizzle-orm";
import type { Db } from "../../src/db/client";
import { chunkText } from "../../src/services/knowledge/chunk-text";
import { chunkVector, countChunks, mergePendingChunks } from "../../src/services/knowledge/documents";
import type { GeneratedDocument } from "../../test/knowledge/generated-corpus";

const BATCH_CHUNKS = 5000;

export async function bulkLoad(db: Db, knowledgeBaseId: string, documents: GeneratedDocument[]) {
  let docs: { id: string; title: string; bytes: number; chunks: string[] }[] = [];
  let pending = 0;
  const flush = async () => {
    if (docs.length === 0) return;
    const rows = docs.flatMap((d) =>
      d.chunks.map((content, position) => ({ d: d.id, t: d.title, p: position, c: content })),
    );
    await db.transaction(async (tx) => {
      await tx.execute(sql`
        insert into knowledge_documents (id, knowledge_base_id, title, bytes, chunks)
        select x.id, ${knowledgeBaseId}, x.title, x.bytes, x.chunks
        from json_to_recordset(${JSON.stringify(docs.map((d) => ({ ...d, chunks: d.chunks.length })))}::json)
          as x(id uuid, title text, bytes int, chunks int)`);
      await tx.execute(sql`
        insert into knowledge_chunks (document_id, knowledge_base_id, position, content, tsv)
        select x.d, ${knowledgeBaseId}, x.p, x.c, ${chunkVector(sql`x.t`, sql`x.c`)}
        from json_to_recordset(${JSON.stringify(rows)}::json) as x(d uuid, t text, p int, c text)`);
      await countChunks(tx, knowledgeBaseId, rows.length);
    });
    docs = [];
    pending = 0;
  };
  for (const doc of documents) {
    const chunks = chunkText(doc.content);
    docs.push({ id: crypto.randomUUID(), title: doc.title, bytes: Buffer.byteLength(doc.content), chunks });
    pending += chunks.length;
    if (pending >= BATCH_CHUNKS) await flush();
  }
  await flush();
  await mergePendingChunks(db);
  await db.transaction(async (tx) => {
    await tx.execute(sql`delete from knowledge_terms where knowledge_base_id = ${knowledgeBaseId}`);
    await tx.execute(sql`
      insert into knowledge_terms (knowledge_base_id, lexeme, chunks)
      select ${knowledgeBaseId}, l.lexeme, count(*) from knowledge_chunks c, unnest(c.tsv) l
      where c.knowledge_base_id = ${knowledgeBaseId} group by l.lexeme`);
  });
}
