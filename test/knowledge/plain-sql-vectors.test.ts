// Nearest chunks in plain SQL (no pgvector, as on this machine): the 4-bit vectors rank as the float
// vectors' cosine does, a small base is compared whole, and a large one only where the question's
// rarer words are. Real Postgres, a local OpenAI-compatible embeddings provider.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { knowledgeBases, organizations, vendors } from "../../src/db/schema";
import { bitPlaneIndex, FULL_SCAN_CHUNKS } from "../../src/services/knowledge/bit-plane-vectors";
import { addDocument } from "../../src/services/knowledge/documents";
import type { EmbeddingsConfig } from "../../src/services/knowledge/embeddings-client";
import { embedMissingChunks } from "../../src/services/knowledge/embedding-store";
import { questionTerms } from "../../src/services/knowledge/search";
import { answerEmbeddings, fakeEmbedding } from "../helpers/fake-embeddings";
import { startReceiver, type Receiver } from "../helpers/receiver";

const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
let provider: Receiver;
let synthetic: Receiver;
let scope: { vendorId: string; organizationId: string };

// 1,536 dimensions (OpenAI's text-embedding-3-small): "Item k" is the k-th synthetic vector
const DIMS = 1536;
let seed = 7;
const random = () => {
  seed = (seed * 16807) % 2147483647;
  return seed / 2147483647 - 0.5;
};
const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const question = unit(Array.from({ length: DIMS }, random));
/** a unit vector whose cosine with the question is `cosine` */
function at(cosine: number) {
  const noise = Array.from({ length: DIMS }, random);
  const along = dot(noise, question);
  const across = unit(noise.map((x, i) => x - along * question[i]!));
  return question.map((q, i) => cosine * q + Math.sqrt(1 - cosine ** 2) * across[i]!);
}
// cosines from 0.95 down to -0.48, stored in a shuffled order
const items = [7, 2, 10, 0, 5, 11, 3, 8, 1, 9, 4, 6].map((k) => at(0.95 - 0.13 * k));

const config = (url: string, model: string): EmbeddingsConfig => ({
  embeddingsUrl: `${url}/v1`,
  embeddingsModel: model,
  embeddingsApiKey: null,
  embeddingsTimeoutMs: 5_000,
});

beforeAll(async () => {
  provider = await startReceiver(answerEmbeddings);
  synthetic = await startReceiver((req) => {
    const { input } = JSON.parse(req.body.toString()) as { input: string[] };
    const data = input.map((text, index) => ({ index, embedding: items[Number(text.split(" ")[1])]! }));
    return { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ data }) };
  });
  const [vendor] = await db.insert(vendors).values({ name: "plain-sql-vectors" }).returning();
  const [org] = await db.insert(organizations).values({ vendorId: vendor!.id, name: "plain-sql-vectors" }).returning();
  scope = { vendorId: vendor!.id, organizationId: org!.id };
});
afterAll(async () => {
  await Promise.all([provider?.close(), synthetic?.close()]);
  await close();
});

async function baseWith(docs: { title: string; content: string }[]) {
  const [kb] = await db.insert(knowledgeBases).values({ organizationId: scope.organizationId, name: "v" }).returning();
  for (const doc of docs)
    await addDocument(db, scope as never, kb!.id, { ...doc, source: null, format: "text/markdown" });
  return kb!.id;
}

const nearest = async (knowledgeBaseId: string, model: string, text: string, vector: number[], limit = 3) =>
  (
    await bitPlaneIndex.nearest(db, {
      knowledgeBaseId,
      model,
      vector,
      terms: await questionTerms(db, knowledgeBaseId, text),
      limit,
    })
  ).map((r) => r.content);

describe("nearest chunks in plain SQL", () => {
  test("1,536-dimension vectors rank as their cosine with the question does", async () => {
    const kb = await baseWith(items.map((_, k) => ({ title: "Item", content: `Item ${k}` })));
    expect(await embedMissingChunks(db, config(synthetic.url, "synthetic"), bitPlaneIndex, kb)).toBe(items.length);
    const byCosine = items
      .map((v, k) => ({ content: `Item ${k}`, cosine: dot(v, question) }))
      .sort((a, b) => b.cosine - a.cosine)
      .map((r) => r.content);
    expect(await nearest(kb, "synthetic", "", question, 8)).toEqual(byCosine.slice(0, 8));
    // vectors of another model are never compared with this one's
    expect(await nearest(kb, "another-model", "", question, 8)).toEqual([]);
  });

  test("a pass embeds, batch after batch, the chunks that have no vector of the configured model", async () => {
    const sections = Array.from({ length: 150 }, (_, k) => `# Part ${k}\n\nPart ${k} of the manual.`);
    const kb = await baseWith([{ title: "Manual", content: sections.join("\n\n") }]);
    const pass = (model: string) => embedMissingChunks(db, config(provider.url, model), bitPlaneIndex, kb);
    expect(await pass("fake")).toBe(150);
    expect(await pass("fake")).toBe(0);
    // another model: every vector again, each chunk once
    expect(await pass("fake-2")).toBe(150);
    const [row] = await db.execute<{ n: number; chunks: number }>(sql`
      select count(*)::int as n, count(distinct chunk_id)::int as chunks from knowledge_chunk_embeddings
      where knowledge_base_id = ${kb} and model = 'fake-2'`);
    expect(row).toEqual({ n: 150, chunks: 150 });
  });

  const refunds = "Returns are reimbursed within 30 days of delivery.";
  const appRefunds = "Refunds for the app are reimbursed within 30 days.";
  const gettingStarted = "Getting started: get the app from the store and sign in.";
  const ask = "money back on the app";

  test(`a base of at most ${FULL_SCAN_CHUNKS} chunks is compared whole`, async () => {
    const kb = await baseWith([refunds, appRefunds, gettingStarted].map((content) => ({ title: "Policy", content })));
    await embedMissingChunks(db, config(provider.url, "fake"), bitPlaneIndex, kb);
    // `refunds` shares no word with the question: only its meaning finds it
    expect(await nearest(kb, "fake", ask, fakeEmbedding(ask))).toEqual([appRefunds, refunds, gettingStarted]);
  });

  test("a larger base is compared where the question's rarer words are, the full-text candidates", async () => {
    const shelves = Array.from({ length: FULL_SCAN_CHUNKS }, (_, k) => `# Shelf ${k}\n\nShelf ${k} holds paper.`);
    const kb = await baseWith([
      ...[refunds, appRefunds, gettingStarted].map((content) => ({ title: "Policy", content })),
      { title: "Shelves", content: shelves.join("\n\n") },
    ]);
    expect((await questionTerms(db, kb, ask)).chunks).toBe(FULL_SCAN_CHUNKS + 3);
    await embedMissingChunks(db, config(provider.url, "fake"), bitPlaneIndex, kb);
    // the two chunks holding "app", nearest first; `refunds`, nearer than `gettingStarted`, is not compared
    expect(await nearest(kb, "fake", ask, fakeEmbedding(ask))).toEqual([appRefunds, gettingStarted]);
    expect(await nearest(kb, "fake", "I want my money back", fakeEmbedding("I want my money back"))).toEqual([]);
  });
});
