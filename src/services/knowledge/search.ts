// Full-text search over one knowledge base, best first. Any word of the question may match (the
// 'english' configuration stems them); each word counts by its rarity in the knowledge base (BM25's
// idf), so a chunk sharing the question's rare words ranks above one sharing its common ones. Only
// chunks holding the rarest of the question's words are ranked, at most MAX_CANDIDATES of them:
// ranking every chunk that shares any word would cost a scan of half the base for a typical question.
import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import type { SearchResultOut } from "../../models/knowledge";

export const MAX_CANDIDATES = 1000;

type Term = { lexeme: string; df: number };
/** The question's words the base holds, with the number of its chunks holding each, and the base's chunk count. */
export type QuestionTerms = { terms: Term[]; chunks: number };

/** The question's words, letters and digits only: what reaches to_tsvector can then never break a tsquery. */
const wordsOf = (question: string) => (question.match(/[\p{L}\p{N}]+/gu) ?? []).join(" ").slice(0, 2000);

export async function searchKnowledgeBase(
  db: DbOrTx,
  knowledgeBaseId: string,
  question: string,
  maxResults: number,
): Promise<SearchResultOut[]> {
  return rankChunks(db, knowledgeBaseId, await questionTerms(db, knowledgeBaseId, question), maxResults);
}

export async function questionTerms(db: DbOrTx, knowledgeBaseId: string, question: string): Promise<QuestionTerms> {
  const [row] = await db.execute<{ chunks: number | null; terms: Term[] }>(sql`
    select (select chunks from knowledge_bases where id = ${knowledgeBaseId}) as chunks,
      (select coalesce(json_agg(json_build_object('lexeme', t.lexeme, 'df', t.chunks)), '[]')
       from knowledge_terms t
       where t.knowledge_base_id = ${knowledgeBaseId} and t.chunks > 0
         and t.lexeme = any(tsvector_to_array(to_tsvector('english', ${wordsOf(question)})))) as terms`);
  return { terms: row!.terms, chunks: row!.chunks ?? 0 };
}

/**
 * The chunks (`c`, knowledge_chunks) holding the question's rarest words: the bounded set that the
 * word ranking scores, and that the vector side scores in a large base without pgvector.
 */
export const candidateChunks = (knowledgeBaseId: string, { terms }: QuestionTerms) =>
  sql`c.knowledge_base_id = ${knowledgeBaseId} and c.tsv @@ to_tsquery('simple', ${selectiveTerms(terms).join(" | ")})`;

export async function rankChunks(
  db: DbOrTx,
  knowledgeBaseId: string,
  question: QuestionTerms,
  maxResults: number,
): Promise<SearchResultOut[]> {
  const { terms, chunks: total } = question;
  if (terms.length === 0) return [];
  const weights = terms.map((t) => ({ l: t.lexeme, w: idf(total, t.df) }));
  const found = await db.execute<{
    documentId: string;
    title: string;
    source: string | null;
    content: string;
    score: number;
  }>(sql`
    with q as materialized (
      select to_tsquery('simple', e->>'l') as l, (e->>'w')::float8 as w from json_array_elements(${JSON.stringify(weights)}::json) e),
    cand as (
      select c.document_id, c.position, c.content, c.tsv from knowledge_chunks c
      where ${candidateChunks(knowledgeBaseId, question)}
      limit ${MAX_CANDIDATES}),
    scored as (
      select cand.*, (select sum(q.w) from q where cand.tsv @@ q.l)
        + ts_rank(cand.tsv, to_tsquery('simple', ${terms.map((t) => t.lexeme).join(" | ")}), 1) as score
      from cand)
    select s.document_id as "documentId", d.title, d.source, s.content, round(s.score::numeric, 4)::float8 as score
    from scored s join knowledge_documents d on d.id = s.document_id
    order by s.score desc, s.document_id, s.position
    limit ${maxResults}`);
  return [...found];
}

/** BM25's inverse document frequency: never negative, larger for rarer words. */
const idf = (total: number, df: number) => Math.log(1 + (total - df + 0.5) / (df + 0.5));

/** The rarest words whose chunks together stay within MAX_CANDIDATES (at least the rarest one). */
function selectiveTerms(terms: Term[]): string[] {
  const byRarity = [...terms].sort((a, b) => a.df - b.df);
  const chosen = [byRarity[0]!.lexeme];
  let candidates = byRarity[0]!.df;
  for (const term of byRarity.slice(1)) {
    if (candidates + term.df > MAX_CANDIDATES) break;
    chosen.push(term.lexeme);
    candidates += term.df;
  }
  return chosen;
}
