// The chunks' embeddings, for hybrid search: stored in knowledge_chunk_embeddings (a migration, plain
// Postgres types), and compared through pgvector's index where the server has the extension, in plain
// SQL elsewhere (vector-index.ts).
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { bitPlaneIndex, quantize } from "./bit-plane-vectors";
import { embed, type EmbeddingsConfig } from "./embeddings-client";
import { pgvectorIndex } from "./pgvector-index";
import type { VectorIndex } from "./vector-index";

const BATCH = 64;
const INGEST_TIMEOUT_MS = 30_000;

/** pgvector's index when this database has (or may create) the extension, plain SQL otherwise. */
export async function chooseVectorIndex(db: Db): Promise<VectorIndex> {
  return (await pgvectorIndex(db)) ?? bitPlaneIndex;
}

/**
 * Embeds the chunks that have no vector of the configured model yet (all of them, or one base's), a
 * batch at a time; returns how many it stored. Chunks deleted meanwhile are skipped. Throws
 * EmbeddingsError when the provider fails: what is stored stays, the rest waits for the next pass.
 */
export async function embedMissingChunks(
  db: Db,
  config: EmbeddingsConfig,
  index: VectorIndex,
  knowledgeBaseId?: string,
) {
  let stored = 0;
  // chunks in id order, on from the last batch's, each one's vector probed by its key (a lateral with a
  // limit): as a join, the planner read and hashed the whole table for every batch (0.3 s at 100,000)
  let after = 0;
  for (;;) {
    const rows = await db.execute<{ id: number; content: string }>(sql`
      select c.id, c.content from knowledge_chunks c
      left join lateral (select e.model from knowledge_chunk_embeddings e where e.chunk_id = c.id limit 1) e on true
      where c.id > ${after} and e.model is distinct from ${config.embeddingsModel}
        ${knowledgeBaseId ? sql`and c.knowledge_base_id = ${knowledgeBaseId}` : sql``}
      order by c.id limit ${BATCH}`);
    if (rows.length === 0) return stored;
    after = rows.at(-1)!.id;
    const vectors = await embed(
      config,
      rows.map((r) => r.content),
      INGEST_TIMEOUT_MS,
    );
    const dims = vectors[0]!.length;
    await index.prepare(db, dims);
    const batch = rows.map((r, i) => ({ id: r.id, e: vectors[i]!, ...quantize(vectors[i]!) }));
    await db.execute(sql`
      insert into knowledge_chunk_embeddings (chunk_id, knowledge_base_id, model, dims, embedding, bits, bits_norm)
      select c.id, c.knowledge_base_id, ${config.embeddingsModel}, ${dims}, x.e, x.bits, x.norm
      from json_to_recordset(${JSON.stringify(batch)}::json) as x(id bigint, e real[], bits varbit[], norm real)
      join knowledge_chunks c on c.id = x.id
      on conflict (chunk_id) do update set model = excluded.model, dims = excluded.dims, embedding = excluded.embedding,
        bits = excluded.bits, bits_norm = excluded.bits_norm`);
    stored += rows.length;
  }
}
