// The chunks' embeddings, for hybrid search. Their table is not in the migrations: it needs the pgvector
// extension, which many Postgres installs lack and only a superuser may create, so it is made here, at
// the first use with EMBEDDINGS_URL set and the extension available, and never otherwise.
import { sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { embed, type EmbeddingsConfig } from "./embeddings-client";

/** How many vector neighbours a search fuses with as many full-text results. */
export const VECTOR_CANDIDATES = 20;
const BATCH = 64;
const INGEST_TIMEOUT_MS = 30_000;
// pgvector indexes `vector` up to 2,000 dimensions and `halfvec` up to 4,000
const MAX_VECTOR_DIMS = 2_000;
const MAX_HALFVEC_DIMS = 4_000;

export type StoreState = "ready" | "no-pgvector";

export async function prepareEmbeddingStore(db: Db): Promise<StoreState> {
  const available = await db.execute(sql`select 1 from pg_available_extensions where name = 'vector'`);
  if (available.length === 0) return "no-pgvector";
  await db.transaction(async (tx) => {
    // every API and bridge process runs this at its start: one at a time
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended('knowledge_chunk_embeddings', 0))`);
    await tx.execute(sql`create extension if not exists vector`);
    await tx.execute(sql`
      create table if not exists knowledge_chunk_embeddings (
        chunk_id bigint primary key references knowledge_chunks(id) on delete cascade,
        knowledge_base_id uuid not null,
        model text not null,
        dims integer not null,
        embedding vector not null)`);
    await tx.execute(sql`
      create index if not exists knowledge_chunk_embeddings_base_idx
      on knowledge_chunk_embeddings (knowledge_base_id, model)`);
  });
  return "ready";
}

/** The type a vector of this size is compared as (null: too large for an index, compared exactly). */
function indexedType(dims: number) {
  if (!Number.isInteger(dims) || dims < 1) throw new Error(`bad vector size ${dims}`);
  if (dims <= MAX_VECTOR_DIMS) return { type: `vector(${dims})`, ops: "vector_cosine_ops" };
  if (dims <= MAX_HALFVEC_DIMS) return { type: `halfvec(${dims})`, ops: "halfvec_cosine_ops" };
  return null;
}
const castTo = (dims: number) => indexedType(dims)?.type ?? "vector";

/** HNSW needs one size per index: a partial index per size in use (a new model brings its own). */
const indexed = new Set<number>();
async function ensureVectorIndex(db: DbOrTx, dims: number) {
  const index = indexedType(dims);
  if (!index || indexed.has(dims)) return;
  await db.execute(
    sql.raw(`create index if not exists knowledge_chunk_embeddings_hnsw_${dims} on knowledge_chunk_embeddings
      using hnsw ((embedding::${index.type}) ${index.ops}) where dims = ${dims}`),
  );
  indexed.add(dims);
}

const vectorText = (v: number[]) => `[${v.join(",")}]`;

/**
 * Embeds the chunks that have no vector of the configured model yet (all of them, or one base's), a
 * batch at a time; returns how many it stored. Chunks deleted meanwhile are skipped. Throws
 * EmbeddingsError when the provider fails: what is stored stays, the rest waits for the next pass.
 */
export async function embedMissingChunks(db: Db, config: EmbeddingsConfig, knowledgeBaseId?: string) {
  let stored = 0;
  for (;;) {
    const rows = await db.execute<{ id: number; content: string }>(sql`
      select c.id, c.content from knowledge_chunks c
      left join knowledge_chunk_embeddings e on e.chunk_id = c.id
      where (e.chunk_id is null or e.model <> ${config.embeddingsModel})
        ${knowledgeBaseId ? sql`and c.knowledge_base_id = ${knowledgeBaseId}` : sql``}
      order by c.id limit ${BATCH}`);
    if (rows.length === 0) return stored;
    const vectors = await embed(
      config,
      rows.map((r) => r.content),
      INGEST_TIMEOUT_MS,
    );
    const dims = vectors[0]!.length;
    await ensureVectorIndex(db, dims);
    const batch = rows.map((r, i) => ({ id: r.id, e: vectorText(vectors[i]!) }));
    await db.execute(sql`
      insert into knowledge_chunk_embeddings (chunk_id, knowledge_base_id, model, dims, embedding)
      select c.id, c.knowledge_base_id, ${config.embeddingsModel}, ${dims}, x.e::vector
      from json_to_recordset(${JSON.stringify(batch)}::json) as x(id bigint, e text)
      join knowledge_chunks c on c.id = x.id
      on conflict (chunk_id) do update set model = excluded.model, dims = excluded.dims, embedding = excluded.embedding`);
    stored += rows.length;
  }
}

export type VectorHit = { documentId: string; title: string; source: string | null; content: string };

/** The base's chunks nearest the question's vector (cosine), nearest first. */
export async function nearestChunks(
  db: Db,
  config: EmbeddingsConfig,
  knowledgeBaseId: string,
  question: number[],
  limit = VECTOR_CANDIDATES,
): Promise<VectorHit[]> {
  const dims = question.length;
  const cast = sql.raw(castTo(dims));
  const distance = sql`e.embedding::${cast} <=> ${vectorText(question)}::${cast}`;
  return db.transaction(async (tx) => {
    // the base is a filter on a shared index: keep scanning until `limit` of its rows are found
    // (pgvector 0.8's iterative scans; ef_search also caps what one scan returns)
    await tx.execute(sql`select set_config('hnsw.iterative_scan', 'strict_order', true),
      set_config('hnsw.ef_search', ${String(Math.max(40, limit * 2))}, true)`);
    const rows = await tx.execute<VectorHit>(sql`
      select c.document_id as "documentId", d.title, d.source, c.content
      from knowledge_chunk_embeddings e
      join knowledge_chunks c on c.id = e.chunk_id
      join knowledge_documents d on d.id = c.document_id
      where e.knowledge_base_id = ${knowledgeBaseId} and e.model = ${config.embeddingsModel} and e.dims = ${dims}
      order by ${distance}
      limit ${limit}`);
    return [...rows];
  });
}
