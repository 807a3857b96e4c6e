// What a knowledge base search uses: full-text search, and, when EMBEDDINGS_URL is set, full-text and
// vector neighbours (pgvector's index or plain SQL, vector-index.ts) fused by reciprocal rank (k = 60,
// Cormack et al.). One per database handle, shared by the API's search route and uploads and by the bridge's
// knowledge tool. A provider that fails or is slow leaves a search full-text, never failed.
import type { Db } from "../../db/client";
import { describeError } from "../../errors";
import { log } from "../../log";
import type { SearchResultOut } from "../../models/knowledge";
import { embed, EmbeddingsError, type EmbeddingsConfig } from "./embeddings-client";
import { chooseVectorIndex, embedMissingChunks } from "./embedding-store";
import { questionTerms, rankChunks, searchKnowledgeBase } from "./search";
import { VECTOR_CANDIDATES, type VectorIndex } from "./vector-index";

const RRF_K = 60;
// a failed embedding pass is tried again after this long
const RETRY_MS = 60_000;

export type KnowledgeSearch = {
  search(knowledgeBaseId: string, question: string, maxResults: number): Promise<SearchResultOut[]>;
  /** embeds the base's new chunks (after an upload); failures are logged, the chunks wait for the next pass */
  indexNew(knowledgeBaseId?: string): Promise<void>;
  /** how searches find nearest chunks (null: full-text only); says once in the log what searches will use */
  prepare(): Promise<VectorIndex | null>;
};

const searches = new WeakMap<Db, KnowledgeSearch>();

export function knowledgeSearchFor(db: Db, config: EmbeddingsConfig): KnowledgeSearch {
  let known = searches.get(db);
  if (!known) {
    known = config.embeddingsUrl ? hybridSearch(db, config) : fullTextSearch(db);
    searches.set(db, known);
  }
  return known;
}

function fullTextSearch(db: Db): KnowledgeSearch {
  return {
    search: (id, question, max) => searchKnowledgeBase(db, id, question, max),
    indexNew: async () => {},
    prepare: async () => null,
  };
}

function hybridSearch(db: Db, config: EmbeddingsConfig): KnowledgeSearch {
  let prepared: Promise<VectorIndex | null> | undefined;
  const prepare = () => {
    prepared ??= chooseVectorIndex(db).then(
      (index) => {
        log.info("knowledge: hybrid search (full-text and embeddings)", {
          model: config.embeddingsModel,
          nearestChunks: index.name,
        });
        return index;
      },
      (error) => {
        log.warn("knowledge: the vector search could not be prepared; full-text search only", {
          error: describeError(error),
        });
        prepared = undefined; // the next use tries again
        return null;
      },
    );
    return prepared;
  };

  // one pass at a time per process; a request during a pass runs one more after it
  let running: Promise<void> | null = null;
  let again = false;
  const indexNew = async (knowledgeBaseId?: string): Promise<void> => {
    const index = await prepare();
    if (!index) return;
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let base = knowledgeBaseId;
      do {
        again = false;
        try {
          await embedMissingChunks(db, config, index, base);
          base = undefined; // a pass asked for meanwhile may be for any base
        } catch (error) {
          // the provider failing is tried again in a minute; a database away, by the next upload or start
          const retry = error instanceof EmbeddingsError;
          log.warn("knowledge: chunks could not be embedded; they are searched by their words until the next pass", {
            error: describeError(error),
            retryInMs: retry ? RETRY_MS : null,
          });
          if (retry) setTimeout(() => void indexNew(), RETRY_MS).unref();
          return;
        }
      } while (again);
    })().finally(() => {
      running = null;
    });
    return running;
  };

  const search = async (knowledgeBaseId: string, question: string, maxResults: number) => {
    const index = await prepare();
    if (!index) return searchKnowledgeBase(db, knowledgeBaseId, question, maxResults);
    const terms = questionTerms(db, knowledgeBaseId, question);
    const [words, nearest] = await Promise.all([
      terms.then((t) => rankChunks(db, knowledgeBaseId, t, VECTOR_CANDIDATES)),
      embed(config, [question.slice(0, 8_000)], config.embeddingsTimeoutMs).then(
        async ([vector]) =>
          index.nearest(db, {
            knowledgeBaseId,
            model: config.embeddingsModel,
            vector: vector!,
            terms: await terms,
            limit: VECTOR_CANDIDATES,
          }),
        (error) => {
          log.warn("knowledge: the question could not be embedded; full-text results only", {
            error: describeError(error),
          });
          return null;
        },
      ),
    ]);
    if (!nearest) return words.slice(0, maxResults);
    return fuse([words, nearest], maxResults);
  };

  return { search, indexNew, prepare };
}

type Hit = Omit<SearchResultOut, "score">;

/** Reciprocal rank fusion: each list adds 1 / (k + rank) to a chunk's score; best first. */
export function fuse(lists: Hit[][], maxResults: number): SearchResultOut[] {
  const fused = new Map<string, SearchResultOut>();
  for (const list of lists)
    list.forEach((hit, i) => {
      const key = `${hit.documentId}\u0000${hit.content}`;
      const seen = fused.get(key);
      const add = 1 / (RRF_K + i + 1);
      if (seen) seen.score += add;
      else
        fused.set(key, {
          documentId: hit.documentId,
          title: hit.title,
          source: hit.source,
          content: hit.content,
          score: add,
        });
    });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, maxResults)
    .map((r) => ({ ...r, score: Math.round(r.score * 1e6) / 1e6 }));
}
