// Nearest chunks through pgvector's HNSW index, on servers that have the extension (production
// installs usually do; Debian's Postgres has no package, so the tests here never take this path).
// The stored `real[]` is cast to `vector` (up to 2,000 dimensions) or `halfvec` (up to 4,000); HNSW takes
// one size per index, so each size in use gets a partial index. Vectors of a size with no index yet
// (one too large, or one whose build failed) are compared in plain SQL instead.
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { describeError } from "../../errors";
import { log } from "../../log";
import { bitPlaneIndex } from "./bit-plane-vectors";
import type { NearestQuery, VectorIndex } from "./vector-index";

const MAX_VECTOR_DIMS = 2_000;
const MAX_HALFVEC_DIMS = 4_000;
const INDEX_PREFIX = "knowledge_chunk_embeddings_hnsw_";

/** pgvector's index over this database's embeddings, or null when the extension is not installed and cannot be. */
export async function pgvectorIndex(db: Db): Promise<VectorIndex | null> {
  const [offered] = await db.execute(sql`select 1 from pg_available_extensions where name = 'vector'`);
  if (!offered) return null;
  let version: string;
  try {
    version = await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended('create extension vector', 0))`);
      await tx.execute(sql`create extension if not exists vector`);
      const [row] = await tx.execute<{ v: string }>(
        sql`select extversion as v from pg_extension where extname = 'vector'`,
      );
      return row!.v;
    });
  } catch (error) {
    // pgvector is not a trusted extension: only a superuser (or a DBA beforehand) may create it
    log.warn("knowledge: the pgvector extension could not be created; nearest chunks in plain SQL", {
      error: describeError(error),
    });
    return null;
  }
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major === 0 && minor < 8) {
    log.warn("knowledge: pgvector before 0.8 has no iterative index scans; nearest chunks in plain SQL", { version });
    return null;
  }
  const existing = await db.execute<{ name: string }>(
    sql`select indexname as name from pg_indexes where tablename = 'knowledge_chunk_embeddings' and indexname like ${`${INDEX_PREFIX}%`}`,
  );
  const indexed = new Set(existing.map((r) => Number(r.name.slice(INDEX_PREFIX.length))));
  return {
    name: "pgvector",
    async prepare(db, dims) {
      const type = castFor(dims);
      if (!type || indexed.has(dims)) return;
      await db.transaction(async (tx) => {
        // every process that embeds may get here at once: one builds, the others find it built
        await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${INDEX_PREFIX + dims}, 0))`);
        await tx.execute(
          sql.raw(`create index if not exists ${INDEX_PREFIX}${dims} on knowledge_chunk_embeddings
            using hnsw ((embedding::${type.cast}) ${type.ops}) where dims = ${dims}`),
        );
      });
      indexed.add(dims);
    },
    nearest: (db, query) =>
      indexed.has(query.vector.length) ? nearestByHnsw(db, query) : bitPlaneIndex.nearest(db, query),
  };
}

function castFor(dims: number) {
  if (!Number.isInteger(dims) || dims < 1) throw new Error(`bad vector size ${dims}`);
  if (dims <= MAX_VECTOR_DIMS) return { cast: `vector(${dims})`, ops: "vector_cosine_ops" };
  if (dims <= MAX_HALFVEC_DIMS) return { cast: `halfvec(${dims})`, ops: "halfvec_cosine_ops" };
  return null;
}

function nearestByHnsw(db: Db, { knowledgeBaseId, model, vector, limit }: NearestQuery) {
  const dims = vector.length;
  // literals, not parameters: the planner matches the index's expression and its `where dims = …`
  const cast = sql.raw(castFor(dims)!.cast);
  const size = sql.raw(String(dims));
  return db.transaction(async (tx) => {
    // the base is a filter on a shared index: keep scanning until `limit` of its rows are found
    // (pgvector 0.8's iterative scans; ef_search also caps what one scan returns)
    await tx.execute(sql`select set_config('hnsw.iterative_scan', 'strict_order', true),
      set_config('hnsw.ef_search', ${String(Math.max(40, limit * 2))}, true)`);
    const rows = await tx.execute<{ documentId: string; title: string; source: string | null; content: string }>(sql`
      select c.document_id as "documentId", d.title, d.source, c.content
      from knowledge_chunk_embeddings e
      join knowledge_chunks c on c.id = e.chunk_id
      join knowledge_documents d on d.id = c.document_id
      where e.knowledge_base_id = ${knowledgeBaseId} and e.model = ${model} and e.dims = ${size}
      order by e.embedding::${cast} <=> ${`[${vector.join(",")}]`}::${cast}
      limit ${limit}`);
    return [...rows];
  });
}
