// Knowledge bases: the tenant's resource and its counts; documents live in documents.ts.
import { and, eq, sql } from "drizzle-orm";
import { knowledgeBases, knowledgeDocuments } from "../../db/schema";
import type { DbOrTx } from "../../db/client";
import type { PageRequest } from "../../models/common";
import type { KnowledgeBaseInput } from "../../models/knowledge";
import type { OrgScope } from "../auth";
import { parsePaging, selectPage } from "../paging";
import { orConflict, single } from "../rows";

export const KNOWLEDGE_BASE = "knowledge base";

const outerId = sql.raw(`"knowledge_bases"."id"`);
const columns = {
  id: knowledgeBases.id,
  name: knowledgeBases.name,
  description: knowledgeBases.description,
  documents: sql<number>`(select count(*)::int from ${knowledgeDocuments} d where d.knowledge_base_id = ${outerId})`,
  chunks: knowledgeBases.chunks,
};
const sortable = {
  id: knowledgeBases.id,
  name: knowledgeBases.name,
  createdAt: knowledgeBases.createdAt,
  updatedAt: knowledgeBases.updatedAt,
};
const inScope = (scope: OrgScope) => eq(knowledgeBases.organizationId, scope.organizationId);
const byId = (scope: OrgScope, id: string) => and(inScope(scope), eq(knowledgeBases.id, id));

export const getKnowledgeBase = (db: DbOrTx, scope: OrgScope, id: string) =>
  single(db.select(columns).from(knowledgeBases).where(byId(scope, id)), KNOWLEDGE_BASE);

/** 404 unless the knowledge base exists in the scope; used before touching its documents. */
export const requireKnowledgeBase = (db: DbOrTx, scope: OrgScope, id: string) =>
  single(db.select({ id: knowledgeBases.id }).from(knowledgeBases).where(byId(scope, id)), KNOWLEDGE_BASE);

export function listKnowledgeBases(db: DbOrTx, scope: OrgScope, query: PageRequest) {
  const paging = parsePaging(query, sortable, "name,asc");
  const where = inScope(scope);
  return selectPage(db, knowledgeBases, where, paging, (limit, offset, orderBy) =>
    db
      .select(columns)
      .from(knowledgeBases)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
}

const row = (input: KnowledgeBaseInput) => ({ name: input.name, description: input.description ?? null });

export async function createKnowledgeBase(db: DbOrTx, scope: OrgScope, input: KnowledgeBaseInput) {
  const [created] = await db
    .insert(knowledgeBases)
    .values({ organizationId: scope.organizationId, ...row(input) })
    .returning({ id: knowledgeBases.id });
  return getKnowledgeBase(db, scope, created!.id);
}

export async function updateKnowledgeBase(db: DbOrTx, scope: OrgScope, id: string, input: KnowledgeBaseInput) {
  await single(
    db
      .update(knowledgeBases)
      .set({ ...row(input), updatedAt: new Date() })
      .where(byId(scope, id))
      .returning({ id: knowledgeBases.id }),
    KNOWLEDGE_BASE,
  );
  return getKnowledgeBase(db, scope, id);
}

/** 409 while a knowledge_base extension uses it (extensions.knowledge_base_id restricts the delete). */
export const deleteKnowledgeBase = (db: DbOrTx, scope: OrgScope, id: string) =>
  single(
    orConflict(db.delete(knowledgeBases).where(byId(scope, id)).returning({ id: knowledgeBases.id }), {
      reference: "the knowledge base is used by an assistant's or agent's knowledge_base extension",
    }),
    KNOWLEDGE_BASE,
  );
