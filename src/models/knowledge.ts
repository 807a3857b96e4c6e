import { t } from "elysia";
import { DigitsBetween, Integer, NonEmpty, Nullable, OptionalNullable, Strict, Uuid, pageQueryFields } from "./common";

const knowledgeBaseWrite = t.Object(
  { name: NonEmpty(), description: OptionalNullable(t.String({ maxLength: 2000 })) },
  Strict,
);

export const KnowledgeBaseModel = {
  create: knowledgeBaseWrite,
  update: knowledgeBaseWrite,
  out: t.Object({
    id: Uuid,
    name: t.String(),
    description: Nullable(t.String()),
    documents: Integer({ description: "read-only: how many documents it holds" }),
    chunks: Integer({ description: "read-only: how many searchable chunks its documents were cut into" }),
  }),
};
export type KnowledgeBaseInput = typeof knowledgeBaseWrite.static;

/** A document sent as JSON; a text/plain, text/markdown or text/html body takes `?title=` and `?source=`. */
export const DocumentJson = t.Object(
  {
    title: NonEmpty(500),
    content: t.String({ minLength: 1, description: "the text; Markdown headings are chunk boundaries" }),
    source: OptionalNullable(t.String({ maxLength: 2048, description: "where it came from (a URL, a file name)" })),
  },
  Strict,
);
export type DocumentInput = typeof DocumentJson.static;

export const DocumentQuery = t.Object(
  {
    title: t.Optional(t.String({ description: "the title of a text/plain, text/markdown or text/html body" })),
    source: t.Optional(t.String({ description: "its source, for a text/plain, text/markdown or text/html body" })),
  },
  Strict,
);

export const DocumentOut = t.Object({
  id: Uuid,
  title: t.String(),
  source: Nullable(t.String()),
  chunks: Integer(),
  bytes: Integer({ description: "size of the document's text as sent" }),
  createdAt: t.String({ format: "date-time" }),
});

export const SearchQuery = t.Object(
  {
    q: t.String({ minLength: 1, maxLength: 1000, description: "the question" }),
    maxResults: t.Optional(DigitsBetween(1, 20, "1..20 (default 3)")),
  },
  Strict,
);

export const SearchResult = t.Object({
  documentId: Uuid,
  title: t.String(),
  source: Nullable(t.String()),
  content: t.String({ description: "the matching chunk's text as stored: what the tool hands the LLM" }),
  score: t.Number(),
});
export type SearchResultOut = typeof SearchResult.static;

export const DocumentsPageQuery = t.Object(pageQueryFields, Strict);
