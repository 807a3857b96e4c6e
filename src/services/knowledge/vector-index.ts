// The two ways a server finds a question's nearest chunks (docs/knowledge.md, "Hybrid search"): pgvector's
// HNSW index where the extension is installed (pgvector-index.ts), plain SQL everywhere else
// (bit-plane-vectors.ts). Both read the same table, knowledge_chunk_embeddings.
import type { Db } from "../../db/client";
import type { QuestionTerms } from "./search";

/** How many vector neighbours a search fuses with as many full-text results. */
export const VECTOR_CANDIDATES = 20;

export type VectorHit = { documentId: string; title: string; source: string | null; content: string };

export type NearestQuery = {
  knowledgeBaseId: string;
  model: string;
  vector: number[];
  /** the question's words in the base: where plain SQL looks in a base too large to scan */
  terms: QuestionTerms;
  limit: number;
};

export type VectorIndex = {
  /** what the logs and the bench call this path */
  name: "pgvector" | "plain SQL";
  /** before vectors of this size are stored */
  prepare(db: Db, dims: number): Promise<void>;
  /** the base's chunks nearest the question's vector (cosine), nearest first */
  nearest(db: Db, query: NearestQuery): Promise<VectorHit[]>;
};
