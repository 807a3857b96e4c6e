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

/** The question's words, letters and digits only: what reaches to_tsvector can then never break a tsquery. */
const wordsOf = (question: string) => (question.match(/[\p{L}\p{N}]+/gu) ?? []).join(" ").slice(0, 2000);

export async function searchKnowledgeBase(
  db: DbOrTx,
  knowledgeBaseId: string,
  question: string,
  maxResults: number,
): Promise<SearchResultOut[]> {
  const words = wordsOf(question);
  if (!words) return [];
  const rows = await db.execute<{ lexeme: string; df: number; total: number }>(sql`
    with q as (select distinct unnest(tsvector_to_array(to_tsvector('english', ${words}))) as lexeme)
    select q.lexeme, coalesce(t.chunks, 0)::int as df,
      (select chunks from knowledge_bases where id = ${knowledgeBaseId}) as total
    from q left join knowledge_terms t on t.knowledge_base_id = ${knowledgeBaseId} and t.lexeme = q.lexeme`);
  const terms: Term[] = rows.filter((r) => r.df > 0).map((r) => ({ lexeme: r.lexeme, df: r.df }));
  if (terms.length === 0) return [];
  const total = rows[0]!.total;
  const selective = selectiveTerms(terms);
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
      where c.knowledge_base_id = ${knowledgeBaseId}
        and c.tsv @@ to_tsquery('simple', ${selective.join(" | ")})
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
