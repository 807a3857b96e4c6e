// Built-in knowledge bases, their documents and their search (docs/knowledge.md).
import { t } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { EmptyEnvelope, Envelope, PageQuery, PagedEnvelope, errorResponses, sortableBy } from "../models/common";
import { done, ok, paged } from "../models/envelope";
import {
  DocumentJson,
  DocumentOut,
  DocumentQuery,
  DocumentsPageQuery,
  KnowledgeBaseModel,
  SearchQuery,
  SearchResult,
} from "../models/knowledge";
import { badRequest } from "../errors";
import { checkBody } from "./check-body";
import * as bases from "../services/knowledge/knowledge-bases";
import * as documents from "../services/knowledge/documents";
import { knowledgeSearchFor } from "../services/knowledge/knowledge-search";
import type { DocumentFormat } from "../services/knowledge/document-text";
import type { OrgScope } from "../services/auth";
import { MAX_DOCUMENT_BYTES } from "./json-body";

const TAG = "Knowledge bases";
const kbOf = (params: Record<string, string>) => assertUuid(params.knowledgeBaseId, bases.KNOWLEDGE_BASE);
const KbParams = t.Object({ vendorId: t.String(), organizationId: t.String(), knowledgeBaseId: t.String() });
const DocParams = t.Object({ ...KbParams.properties, documentId: t.String() });

/** What app.ts's parser hands over for a text/plain, text/markdown or text/html body. */
type TextBody = { text: string; contentType: DocumentFormat };
const isTextBody = (body: unknown): body is TextBody =>
  typeof body === "object" && body !== null && "contentType" in body && "text" in body && !("content" in body);

function documentInput(body: unknown, query: { title?: string; source?: string }) {
  if (isTextBody(body)) {
    const title = query.title?.trim();
    if (!title) throw badRequest("title", "required (?title=) for a text/plain, text/markdown or text/html body");
    if (title.length > 500) throw badRequest("title", "at most 500 characters");
    return { title, source: query.source ?? null, content: body.text, format: body.contentType };
  }
  const json = checkBody(DocumentJson, body);
  return { title: json.title, source: json.source ?? null, content: json.content, format: "application/json" as const };
}

export function knowledgeBasesRoutes(deps: Deps) {
  const knowledge = knowledgeSearchFor(deps.db, deps.config.knowledge);
  /** The upload answers once its chunks are embedded too (hybrid search only), so a search right after finds them. */
  const addDocument = async (scope: OrgScope, knowledgeBaseId: string, input: documents.NewDocument) => {
    const added = await documents.addDocument(deps.db, scope, knowledgeBaseId, input);
    await knowledge.indexNew(knowledgeBaseId);
    return added;
  };
  return resourceRoutes({
    prefix: `${ORG_PREFIX}/knowledge-bases`,
    access: organizationAccess(deps),
    tag: TAG,
    what: bases.KNOWLEDGE_BASE,
    idParam: "knowledgeBaseId",
    sortable: ["id", "name", "createdAt", "updatedAt"],
    models: { ...KnowledgeBaseModel, query: PageQuery },
    service: {
      list: ({ scope }, _, query) => bases.listKnowledgeBases(deps.db, scope, query),
      get: ({ scope }, _, id) => bases.getKnowledgeBase(deps.db, scope, id),
      create: ({ scope }, _, body) => bases.createKnowledgeBase(deps.db, scope, body),
      update: ({ scope }, _, id, body) => bases.updateKnowledgeBase(deps.db, scope, id, body),
      remove: ({ scope }, _, id) => bases.deleteKnowledgeBase(deps.db, scope, id),
    },
  })
    .post(
      "/:knowledgeBaseId/documents",
      async ({ access, params, body, query, status }) =>
        status(201, ok(await addDocument(access.scope, kbOf(params), documentInput(body, query)))),
      {
        params: KbParams,
        query: DocumentQuery,
        response: { 201: Envelope(DocumentOut), 413: errorResponses[400], ...errorResponses },
        detail: {
          tags: [TAG],
          summary: "Add a document (JSON, or a text/plain, text/markdown or text/html body with ?title=)",
          description: `Up to ${MAX_DOCUMENT_BYTES} bytes. HTML loses its tags, scripts and styles; the text is cut into chunks on headings and paragraphs.`,
          "x-text-bodies": true,
          requestBody: {
            required: true,
            content: {
              "application/json": { schema: DocumentJson as object },
              "text/plain": { schema: { type: "string" } },
              "text/markdown": { schema: { type: "string" } },
              "text/html": { schema: { type: "string" } },
            },
          },
        },
      },
    )
    .get(
      "/:knowledgeBaseId/documents",
      async ({ access, params, query }) =>
        paged(await documents.listDocuments(deps.db, access.scope, kbOf(params), query)),
      {
        params: KbParams,
        query: sortableBy(DocumentsPageQuery, ["id", "title", "createdAt"]),
        response: { 200: PagedEnvelope(DocumentOut), ...errorResponses },
        detail: { tags: [TAG], summary: "List a knowledge base's documents (sortable by id, title, createdAt)" },
      },
    )
    .delete(
      "/:knowledgeBaseId/documents/:documentId",
      async ({ access, params }) => {
        await documents.deleteDocument(deps.db, access.scope, kbOf(params), assertUuid(params.documentId, "document"));
        return done("document deleted");
      },
      {
        params: DocParams,
        response: { 200: EmptyEnvelope, ...errorResponses },
        detail: { tags: [TAG], summary: "Delete a document and its chunks" },
      },
    )
    .get(
      "/:knowledgeBaseId/search",
      async ({ access, params, query }) => {
        const id = kbOf(params);
        // SearchQuery has checked the range
        const maxResults = Number(query.maxResults ?? 3);
        await bases.requireKnowledgeBase(deps.db, access.scope, id);
        return ok(await knowledge.search(id, query.q, maxResults));
      },
      {
        params: KbParams,
        query: SearchQuery,
        response: { 200: Envelope(t.Array(SearchResult)), ...errorResponses },
        detail: {
          tags: [TAG],
          summary: "Search a knowledge base: what the knowledge_base tool would hand the LLM, best first",
        },
      },
    );
}
