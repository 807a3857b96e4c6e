// Ranking on a generated set: questions worded differently from the documents.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createDb } from "../../src/db/client";
import { knowledgeBases, organizations, vendors } from "../../src/db/schema";
import { addDocument } from "../../src/services/knowledge/documents";
import { searchKnowledgeBase } from "../../src/services/knowledge/search";
import { generateCorpus } from "./generated-corpus";

const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
const corpus = generateCorpus(60);
let kb: string;
let scope: { vendorId: string; organizationId: string };

beforeAll(async () => {
  const [vendor] = await db.insert(vendors).values({ name: "ranking" }).returning();
  const [org] = await db.insert(organizations).values({ vendorId: vendor!.id, name: "ranking" }).returning();
  scope = { vendorId: vendor!.id, organizationId: org!.id };
  const [row] = await db.insert(knowledgeBases).values({ organizationId: org!.id, name: "generated" }).returning();
  kb = row!.id;
  for (const doc of corpus.documents)
    await addDocument(db, scope as never, kb, { ...doc, source: null, format: "text/markdown" });
}, 60_000);
afterAll(() => close());

test("recall@3 >= 0.9 and the top result holds the answer for >= 80 % of the questions", async () => {
  let top1 = 0;
  let top3 = 0;
  let reciprocal = 0;
  for (const { question, answer } of corpus.questions) {
    const results = await searchKnowledgeBase(db, kb, question, 3);
    const rank = results.findIndex((r) => r.content.includes(answer));
    if (rank === 0) top1++;
    if (rank >= 0) {
      top3++;
      reciprocal += 1 / (rank + 1);
    }
  }
  const n = corpus.questions.length;
  console.log(
    `ranking: ${n} questions, recall@3 ${(top3 / n).toFixed(3)}, top-1 ${(top1 / n).toFixed(3)}, MRR ${(reciprocal / n).toFixed(3)}`,
  );
  expect(top3 / n).toBeGreaterThanOrEqual(0.9);
  expect(top1 / n).toBeGreaterThanOrEqual(0.8);
});

test("results are best first, bounded by maxResults, and a question with no known word finds nothing", async () => {
  const results = await searchKnowledgeBase(db, kb, corpus.questions[0]!.question, 5);
  expect(results.length).toBe(5);
  for (let i = 1; i < results.length; i++) expect(results[i - 1]!.score).toBeGreaterThanOrEqual(results[i]!.score);
  expect(await searchKnowledgeBase(db, kb, "xylophone quasar", 3)).toEqual([]);
  expect(await searchKnowledgeBase(db, kb, "?!", 3)).toEqual([]);
});
