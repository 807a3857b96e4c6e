// Nearest chunks in plain SQL, for servers without pgvector. A cosine over `real[]` in SQL walks the
// floats one executor step each: 0.39 ms a chunk at 1,536 dimensions on our machines, too slow to scan
// even a small base. So each vector is also stored at 4 bits a dimension, as 4 bit strings (one per bit
// of the two's complement values -7..7), and the dot product of two such vectors is the sum over bit
// pairs of weight × bit_count(a AND b): 16 bit_counts over 192 bytes, 10 µs a chunk (docs/knowledge.md,
// "Numbers"). Which chunks are compared stays bounded: every chunk of a base up to FULL_SCAN_CHUNKS,
// else the chunks holding the question's rarer words (the full-text candidates).
import { sql } from "drizzle-orm";
import { candidateChunks, MAX_CANDIDATES } from "./search";
import type { VectorIndex } from "./vector-index";

/** A base of at most this many chunks is compared whole. */
export const FULL_SCAN_CHUNKS = 1000;
const LEVELS = 7;
/** what each stored bit string weighs in a two's complement value, least significant first */
const BIT_WEIGHTS = [1, 2, 4, -8];

/** The vector at 4 bits a dimension (scaled by its largest component): its bit strings and its length. */
export function quantize(vector: number[]): { bits: string[]; norm: number } {
  const top = Math.max(...vector.map(Math.abs)) || 1;
  const levels = vector.map((x) => Math.round((x / top) * LEVELS));
  return {
    bits: BIT_WEIGHTS.map((_, k) => levels.map((v) => ((v & 15) >> k) & 1).join("")),
    norm: Math.hypot(...levels) || 1,
  };
}

/** Σ over bit pairs of weight × bit_count(chunk bits AND question bits): the two quantized vectors' dot product. */
const dotProduct = sql.raw(
  BIT_WEIGHTS.flatMap((a, i) =>
    BIT_WEIGHTS.map((b, j) => `${a * b} * bit_count(e.bits[${i + 1}] & q.bits[${j + 1}])`),
  ).join(" + "),
);

export const bitPlaneIndex: VectorIndex = {
  name: "plain SQL",
  prepare: async () => {},
  async nearest(db, { knowledgeBaseId, model, vector, terms, limit }) {
    const small = terms.chunks <= FULL_SCAN_CHUNKS;
    if (!small && terms.terms.length === 0) return [];
    const question = quantize(vector);
    const dims = vector.length;
    const compared = small
      ? sql`select e.chunk_id, e.bits, e.bits_norm from knowledge_chunk_embeddings e
          where e.knowledge_base_id = ${knowledgeBaseId} and e.model = ${model} and e.dims = ${dims}
          limit ${FULL_SCAN_CHUNKS}`
      : // one index probe a candidate (a lateral with a limit is never made a join): as a join, the
        // planner read and hashed every vector in the table, 34 ms against 6 at 10,000 chunks
        sql`select e.chunk_id, e.bits, e.bits_norm
          from (select c.id from knowledge_chunks c where ${candidateChunks(knowledgeBaseId, terms)} limit ${MAX_CANDIDATES}) c
          cross join lateral (select e.chunk_id, e.bits, e.bits_norm from knowledge_chunk_embeddings e
            where e.chunk_id = c.id and e.model = ${model} and e.dims = ${dims} limit 1) e`;
    // the question's length is the same for every chunk: dividing by the chunk's alone ranks by cosine
    const rows = await db.execute<{ documentId: string; title: string; source: string | null; content: string }>(sql`
      with q as (select ${`{${question.bits.join(",")}}`}::varbit[] as bits),
      compared as (${compared}),
      nearest as (
        select e.chunk_id, (${dotProduct}) / e.bits_norm as score from compared e, q
        order by score desc limit ${limit})
      select c.document_id as "documentId", d.title, d.source, c.content
      from nearest n join knowledge_chunks c on c.id = n.chunk_id join knowledge_documents d on d.id = c.document_id
      order by n.score desc, c.id`);
    return [...rows];
  },
};
