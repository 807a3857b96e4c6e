// `bun run bench knowledge [--chunks 20000]`: ingestion MB/s, search p50/p99 over a knowledge base of
// about that many chunks, and recall@3 / top-1 / MRR on the generated questions (test/knowledge/generated-corpus.ts).
import { parseArgs } from "node:util";
import { createDb } from "../../src/db/client";
import { dropDatabase, migrateDatabase } from "../../src/db/migrate";
import { knowledgeBases, organizations, vendors } from "../../src/db/schema";
import { addDocument } from "../../src/services/knowledge/documents";
import { searchKnowledgeBase } from "../../src/services/knowledge/search";
import { generateCorpus } from "../../test/knowledge/generated-corpus";

const { values } = parseArgs({ options: { chunks: { type: "string", default: "20000" } } });
const target = Number(values.chunks);
const server = process.env.BENCH_DATABASE_SERVER ?? "postgres://postgres@127.0.0.1:5432";
const databaseUrl = `${server}/vas_bench_knowledge_${Date.now()}`;
await migrateDatabase(databaseUrl);
const { db, close } = createDb(databaseUrl, { max: 4 });
try {
  // a product page is six chunks (its heading and five sections); help pages add a few more
  const corpus = generateCorpus(Math.ceil(target / 6.2));
  const [vendor] = await db.insert(vendors).values({ name: "bench" }).returning();
  const [org] = await db.insert(organizations).values({ vendorId: vendor!.id, name: "bench" }).returning();
  const [kb] = await db.insert(knowledgeBases).values({ organizationId: org!.id, name: "bench" }).returning();
  const scope = { vendorId: vendor!.id, organizationId: org!.id } as never;
  let bytes = 0;
  let chunks = 0;
  const started = performance.now();
  for (const doc of corpus.documents) {
    const added = await addDocument(db, scope, kb!.id, { ...doc, source: null, format: "text/markdown" });
    bytes += added.bytes;
    chunks += added.chunks;
  }
  const ingestSeconds = (performance.now() - started) / 1000;
  await db.execute("analyze knowledge_chunks, knowledge_terms" as never);

  const questions = corpus.questions;
  const times: number[] = [];
  let top1 = 0;
  let top3 = 0;
  let reciprocal = 0;
  for (const { question, answer } of questions.slice(0, 2000)) {
    const t0 = performance.now();
    const results = await searchKnowledgeBase(db, kb!.id, question, 3);
    times.push(performance.now() - t0);
    const rank = results.findIndex((r) => r.content.includes(answer));
    if (rank === 0) top1++;
    if (rank >= 0) {
      top3++;
      reciprocal += 1 / (rank + 1);
    }
  }
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!.toFixed(1);
  const n = times.length;
  console.log("bench/knowledge: absolute figures, no baseline server (search is one Postgres query per question):");
  console.table({
    documents: corpus.documents.length,
    chunks,
    "ingestion MB/s": (bytes / 1024 / 1024 / ingestSeconds).toFixed(2),
    questions: n,
    "search p50 ms": pct(50),
    "search p99 ms": pct(99),
    "recall@3": (top3 / n).toFixed(3),
    "top-1": (top1 / n).toFixed(3),
    MRR: (reciprocal / n).toFixed(3),
  });
} finally {
  await close();
  await dropDatabase(databaseUrl);
}
