// Built-in knowledge bases: documents cut into chunks that Postgres full-text search ranks.
import {
  bigint,
  bigserial,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { id, ownedByOrganization, timestamps } from "./tenancy";

const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });
const bitVarying = customType<{ data: string }>({ dataType: () => "bit varying" });

export const knowledgeBases = pgTable(
  "knowledge_bases",
  {
    ...ownedByOrganization(),
    name: text("name").notNull(),
    description: text("description"),
    // the sum of its documents' chunks, kept on every upload and delete: a search's idf needs it at once
    chunks: integer("chunks").notNull().default(0),
    ...timestamps,
  },
  (t) => [index("knowledge_bases_org_name_idx").on(t.organizationId, t.name)],
);

export const knowledgeDocuments = pgTable(
  "knowledge_documents",
  {
    id: id(),
    knowledgeBaseId: uuid("knowledge_base_id")
      .notNull()
      .references(() => knowledgeBases.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    source: text("source"),
    bytes: integer("bytes").notNull(),
    chunks: integer("chunks").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("knowledge_documents_kb_idx").on(t.knowledgeBaseId, t.createdAt)],
);

export const knowledgeChunks = pgTable(
  "knowledge_chunks",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    documentId: uuid("document_id")
      .notNull()
      .references(() => knowledgeDocuments.id, { onDelete: "cascade" }),
    // denormalised: a search filters on it without joining the documents
    knowledgeBaseId: uuid("knowledge_base_id").notNull(),
    position: integer("position").notNull(),
    content: text("content").notNull(),
    // the document's title (weight B) and the chunk's text, 'english' stems; written on insert
    tsv: tsvector("tsv").notNull(),
  },
  (t) => [
    index("knowledge_chunks_tsv_idx").using("gin", t.tsv),
    index("knowledge_chunks_document_idx").on(t.documentId, t.position),
  ],
);

// How many chunks of a knowledge base hold each lexeme: a search ranks only the chunks that share
// the question's rarer words (a bounded candidate set), and weighs each word by its rarity.
export const knowledgeTerms = pgTable(
  "knowledge_terms",
  {
    knowledgeBaseId: uuid("knowledge_base_id")
      .notNull()
      .references(() => knowledgeBases.id, { onDelete: "cascade" }),
    lexeme: text("lexeme").notNull(),
    chunks: integer("chunks").notNull(),
  },
  (t) => [primaryKey({ columns: [t.knowledgeBaseId, t.lexeme] })],
);

// A chunk's embedding (hybrid search, when EMBEDDINGS_URL is set), in plain Postgres types so that
// every server has the table: pgvector, where installed, indexes `embedding` through a cast
// (src/services/knowledge/pgvector-index.ts); elsewhere a search compares `bits`
// (src/services/knowledge/bit-plane-vectors.ts).
export const knowledgeChunkEmbeddings = pgTable(
  "knowledge_chunk_embeddings",
  {
    chunkId: bigint("chunk_id", { mode: "number" })
      .primaryKey()
      .references(() => knowledgeChunks.id, { onDelete: "cascade" }),
    knowledgeBaseId: uuid("knowledge_base_id").notNull(),
    model: text("model").notNull(),
    dims: integer("dims").notNull(),
    embedding: real("embedding").array().notNull(),
    // the embedding at 4 bits a dimension, one bit string per bit (two's complement, least first),
    // and that quantized vector's length: a cosine in plain SQL is 16 bit_counts, not a loop over floats
    bits: bitVarying("bits").array().notNull(),
    bitsNorm: real("bits_norm").notNull(),
  },
  (t) => [index("knowledge_chunk_embeddings_base_idx").on(t.knowledgeBaseId, t.model)],
);
