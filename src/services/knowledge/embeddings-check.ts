// Says once, at start, what knowledge search will use when embeddings are configured: searches are
// full-text only in this version, and need the pgvector extension for anything more (docs/knowledge.md).
import { sql } from "drizzle-orm";
import type { Config } from "../../config";
import type { Db } from "../../db/client";
import { describeError } from "../../errors";
import { log } from "../../log";

export async function reportEmbeddings(db: Db, config: Config) {
  if (!config.knowledge.embeddingsUrl) return;
  try {
    const rows = await db.execute<{ name: string }>(
      sql`select name from pg_available_extensions where name = 'vector'`,
    );
    if (rows.length === 0)
      log.warn(
        "knowledge: EMBEDDINGS_URL is set but the pgvector extension is not available in this Postgres; knowledge bases are searched with full-text search only",
      );
    else
      log.warn(
        "knowledge: EMBEDDINGS_URL is set; hybrid search with embeddings is not built yet, knowledge bases are searched with full-text search only",
      );
  } catch (error) {
    log.warn("knowledge: could not check for the pgvector extension", { error: describeError(error) });
  }
}
