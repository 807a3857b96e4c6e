// A knowledge base's documents: stored with their chunks and the base's word counts in one
// transaction, so a search never sees half a document.
import { and, eq, sql, type SQL } from "drizzle-orm";
import { knowledgeDocuments } from "../../db/schema";
import type { Db, DbOrTx } from "../../db/client";
import type { PageRequest } from "../../models/common";
import type { OrgScope } from "../auth";
import { parsePaging, selectPage } from "../paging";
import { single } from "../rows";
import { describeError } from "../../errors";
import { log } from "../../log";
import { chunkText } from "./chunk-text";
import { documentText, type DocumentFormat } from "./document-text";
import { requireKnowledgeBase } from "./knowledge-bases";

export type NewDocument = { title: string; source: string | null; content: string; format: DocumentFormat };

const columns = {
  id: knowledgeDocuments.id,
  title: knowledgeDocuments.title,
  source: knowledgeDocuments.source,
  chunks: knowledgeDocuments.chunks,
  bytes: knowledgeDocuments.bytes,
  createdAt: knowledgeDocuments.createdAt,
};
const out = <T extends { createdAt: Date }>(row: T) => ({ ...row, createdAt: row.createdAt.toISOString() });
const sortable = {
  id: knowledgeDocuments.id,
  title: knowledgeDocuments.title,
  createdAt: knowledgeDocuments.createdAt,
};

/** A chunk's search vector: its document's title (weight B) and its text, 'english' stems. */
export const chunkVector = (title: SQL, content: SQL) =>
  sql`setweight(to_tsvector('english', ${title}), 'B') || to_tsvector('english', ${content})`;

/** Keeps knowledge_bases.chunks (raw SQL: a count is no edit, updatedAt stays). */
export const countChunks = (db: DbOrTx, knowledgeBaseId: string, delta: number) =>
  db.execute(sql`update knowledge_bases set chunks = chunks + ${delta} where id = ${knowledgeBaseId}`);

export async function addDocument(db: Db, scope: OrgScope, knowledgeBaseId: string, input: NewDocument) {
  const chunks = chunkText(documentText(input.content, input.format));
  const bytes = Buffer.byteLength(input.content);
  const added = await db.transaction(async (tx) => {
    await requireKnowledgeBase(tx, scope, knowledgeBaseId);
    const [doc] = await tx
      .insert(knowledgeDocuments)
      .values({ knowledgeBaseId, title: input.title, source: input.source, bytes, chunks: chunks.length })
      .returning(columns);
    await tx.execute(sql`
      insert into knowledge_chunks (document_id, knowledge_base_id, position, content, tsv)
      select ${doc!.id}, ${knowledgeBaseId}, u.position - 1, u.content, ${chunkVector(sql`${input.title}`, sql`u.content`)}
      from json_array_elements_text(${JSON.stringify(chunks)}::json) with ordinality as u(content, position)`);
    await countChunks(tx, knowledgeBaseId, chunks.length);
    // in lexeme order: two uploads into one base lock the shared rows in the same order
    await tx.execute(sql`
      insert into knowledge_terms (knowledge_base_id, lexeme, chunks)
      select ${knowledgeBaseId}, l.lexeme, count(*) from knowledge_chunks c, unnest(c.tsv) l
      where c.document_id = ${doc!.id} group by l.lexeme order by l.lexeme
      on conflict (knowledge_base_id, lexeme) do update set chunks = knowledge_terms.chunks + excluded.chunks`);
    return out(doc!);
  });
  await mergePendingChunks(db);
  return added;
}

/**
 * New chunks wait in the GIN index's pending list, which every search scans linearly (40 ms at 7,000
 * pending chunks, on our machines); the upload merges them at once, in one batch, instead of leaving
 * it to autovacuum. A failure here loses nothing: the chunks are stored and found, only slower.
 */
export async function mergePendingChunks(db: Db) {
  try {
    await db.execute(sql`select gin_clean_pending_list('knowledge_chunks_tsv_idx'::regclass)`);
  } catch (error) {
    log.warn("knowledge: could not merge the search index's pending list", { error: describeError(error) });
  }
}

export async function listDocuments(db: DbOrTx, scope: OrgScope, knowledgeBaseId: string, query: PageRequest) {
  const paging = parsePaging(query, sortable, "createdAt,asc");
  await requireKnowledgeBase(db, scope, knowledgeBaseId);
  const where = eq(knowledgeDocuments.knowledgeBaseId, knowledgeBaseId);
  return selectPage(db, knowledgeDocuments, where, paging, async (limit, offset, orderBy) =>
    (
      await db
        .select(columns)
        .from(knowledgeDocuments)
        .where(where)
        .orderBy(...orderBy)
        .limit(limit)
        .offset(offset)
    ).map(out),
  );
}

export async function deleteDocument(db: Db, scope: OrgScope, knowledgeBaseId: string, documentId: string) {
  await db.transaction(async (tx) => {
    await requireKnowledgeBase(tx, scope, knowledgeBaseId);
    const byId = and(eq(knowledgeDocuments.knowledgeBaseId, knowledgeBaseId), eq(knowledgeDocuments.id, documentId));
    await single(
      tx.select({ id: knowledgeDocuments.id }).from(knowledgeDocuments).where(byId).for("update"),
      "document",
    );
    await tx.execute(sql`
      update knowledge_terms t set chunks = t.chunks - gone.n
      from (select l.lexeme, count(*)::int as n from knowledge_chunks c, unnest(c.tsv) l
            where c.document_id = ${documentId} group by l.lexeme) gone
      where t.knowledge_base_id = ${knowledgeBaseId} and t.lexeme = gone.lexeme`);
    const [gone] = await tx.delete(knowledgeDocuments).where(byId).returning({ chunks: knowledgeDocuments.chunks });
    await countChunks(tx, knowledgeBaseId, -gone!.chunks);
    await tx.execute(sql`delete from knowledge_terms where knowledge_base_id = ${knowledgeBaseId} and chunks <= 0`);
  });
}
