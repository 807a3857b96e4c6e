// `bun run bench knowledge [--sizes 10000,100000] [--ingest 400] [--embeddings [--dims 256]]`: ingestion MB/s through the upload
// path (the first --ingest documents), then search p50/p99 and recall@3 / top-1 / MRR on the generated
// questions (test/knowledge/generated-corpus.ts) with the knowledge base grown to each size in chunks.
// Documents past the first --ingest are bulk-loaded (bulk-load.ts): the search sees the same rows.
// --embeddings: hybrid search too, against a local OpenAI-compatible embeddings provider
// (test/helpers/fake-embeddings.ts, --dims dimensions, 256 unless told): the time to embed each size,
// the vector query alone, and the whole hybrid search (the provider's local round trip included). It
// prints which way this server finds nearest chunks: pgvector's index, or plain SQL without the extension.
import { parseArgs } from "node:util";
import { sql } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { dropDatabase, migrateDatabase } from "../../src/db/migrate";
import { knowledgeBases, organizations, vendors } from "../../src/db/schema";
import { addDocument } from "../../src/services/knowledge/documents";
import { questionTerms, type QuestionTerms, searchKnowledgeBase } from "../../src/services/knowledge/search";
import { embed, type EmbeddingsConfig } from "../../src/services/knowledge/embeddings-client";
import { embedMissingChunks } from "../../src/services/knowledge/embedding-store";
import { knowledgeSearchFor } from "../../src/services/knowledge/knowledge-search";
import { embeddingsResponder, FAKE_DIMS } from "../../test/helpers/fake-embeddings";
import { startReceiver } from "../../test/helpers/receiver";
import { generateCorpus, type GeneratedQuestion } from "../../test/knowledge/generated-corpus";
import { bulkLoad } from "./bulk-load";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "10000,100000" },
    ingest: { type: "string", default: "400" },
    embeddings: { type: "boolean", default: false },
    dims: { type: "string", default: String(FAKE_DIMS) },
  },
});
const sizes = values.sizes.split(",").map(Number);
const ingestDocs = Number(values.ingest);
const QUESTIONS = 2000;
// a product page is six chunks (its heading and five sections), a help page five; one help page per five products
const CHUNKS_PER_PRODUCT = 6 + 5 / 5;
const server = process.env.BENCH_DATABASE_SERVER ?? "postgres://postgres@127.0.0.1:5432";
const databaseUrl = `${server}/vas_bench_knowledge_${Date.now()}`;
await migrateDatabase(databaseUrl);
// a bulk statement of thousands of chunks outlasts the default 5 s deadline on a loaded machine
const { db, close } = createDb(databaseUrl, { max: 4, timeoutMs: 120_000 });
const rows: Record<string, string | number>[] = [];
const provider = values.embeddings ? await startReceiver(embeddingsResponder(Number(values.dims))) : null;
const embeddings: EmbeddingsConfig | null = provider && {
  embeddingsUrl: `${provider.url}/v1`,
  embeddingsModel: "fake-embed-64",
  embeddingsApiKey: null,
  embeddingsTimeoutMs: 5_000,
};
const hybrid = embeddings && knowledgeSearchFor(db, embeddings);
const vectorIndex = hybrid && (await hybrid.prepare());
if (hybrid && !vectorIndex) throw new Error("the embeddings table could not be prepared");
if (vectorIndex) console.log(`nearest chunks: ${vectorIndex.name} (${values.dims} dimensions)`);
try {
  const productsAt = sizes.map((s) => Math.ceil(s / CHUNKS_PER_PRODUCT));
  const corpus = generateCorpus(productsAt.at(-1)!);
  const products = corpus.documents.slice(0, productsAt.at(-1));
  const helpPages = corpus.documents.slice(productsAt.at(-1));
  const [vendor] = await db.insert(vendors).values({ name: "bench" }).returning();
  const [org] = await db.insert(organizations).values({ vendorId: vendor!.id, name: "bench" }).returning();
  const [kb] = await db.insert(knowledgeBases).values({ organizationId: org!.id, name: "bench" }).returning();
  const scope = { vendorId: vendor!.id, organizationId: org!.id } as never;

  let bytes = 0;
  const started = performance.now();
  for (const doc of products.slice(0, ingestDocs)) {
    const added = await addDocument(db, scope, kb!.id, { ...doc, source: null, format: "text/markdown" });
    bytes += added.bytes;
  }
  const ingestion = bytes / 1024 / 1024 / ((performance.now() - started) / 1000);
  console.log(`ingestion: ${ingestDocs} documents through addDocument, ${ingestion.toFixed(3)} MB/s`);

  let loadedProducts = ingestDocs;
  let loadedHelp = 0;
  for (const [i, size] of sizes.entries()) {
    const t0 = performance.now();
    const help = Math.ceil(productsAt[i]! / 5);
    await bulkLoad(db, kb!.id, [
      ...products.slice(loadedProducts, productsAt[i]),
      ...helpPages.slice(loadedHelp, help),
    ]);
    loadedProducts = productsAt[i]!;
    loadedHelp = help;
    await db.execute("analyze knowledge_chunks, knowledge_terms, knowledge_documents" as never);
    const [{ chunks }] = (await db.execute(
      `select count(*)::int as chunks from knowledge_chunks` as never,
    )) as unknown as [{ chunks: number }];
    console.log(
      `loaded ${chunks} chunks (target ${size}) in ${((performance.now() - t0) / 1000).toFixed(1)} s; searching`,
    );
    // questions spread over every product loaded so far, not only the first ones
    const asked = corpus.questions.slice(0, loadedProducts * 5);
    const stride = Math.max(1, Math.floor(asked.length / QUESTIONS));
    const questions = asked.filter((_, k) => k % stride === 0);
    rows.push({
      chunks,
      documents: loadedProducts + loadedHelp,
      search: "full-text",
      ...(await measure(questions, (q) => searchKnowledgeBase(db, kb!.id, q, 3))),
    });
    console.log(rows.at(-1));
    if (hybrid && embeddings && vectorIndex) {
      const t1 = performance.now();
      const embedded = await embedMissingChunks(db, embeddings, vectorIndex, kb!.id);
      console.log(`embedded ${embedded} chunks in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
      await db.execute("analyze knowledge_chunk_embeddings" as never);
      // the question's vector and words, made beforehand: the vector query alone
      const asks = new Map<string, { vector: number[]; terms: QuestionTerms }>();
      for (const { question } of questions)
        asks.set(question, {
          vector: (await embed(embeddings, [question], 5_000))[0]!,
          terms: await questionTerms(db, kb!.id, question),
        });
      rows.push({
        chunks,
        documents: loadedProducts + loadedHelp,
        search: `vector query alone (${vectorIndex.name})`,
        ...(await measure(questions, (q) =>
          vectorIndex.nearest(db, {
            knowledgeBaseId: kb!.id,
            model: embeddings.embeddingsModel,
            ...asks.get(q)!,
            limit: 3,
          }),
        )),
      });
      console.log(rows.at(-1));
      rows.push({
        chunks,
        documents: loadedProducts + loadedHelp,
        search: `hybrid, ${vectorIndex.name} (provider included)`,
        ...(await measure(questions, (q) => hybrid.search(kb!.id, q, 3))),
      });
      console.log(rows.at(-1));
    }
  }
  console.table(rows.map((r) => ({ ...r, "ingestion MB/s": ingestion.toFixed(3) })));
} finally {
  await provider?.close();
  await close();
  await dropDatabase(databaseUrl);
}

async function measure(questions: GeneratedQuestion[], search: (q: string) => Promise<{ content: string }[]>) {
  const times: number[] = [];
  // the baseline, interleaved with the searches: a `select 1` round trip on the same pool, so that a
  // loaded machine shows as such beside the search figures
  const baseline: number[] = [];
  let top1 = 0;
  let top3 = 0;
  let reciprocal = 0;
  for (const { question, answer } of questions) {
    const t0 = performance.now();
    const results = await search(question);
    times.push(performance.now() - t0);
    const t1 = performance.now();
    await db.execute(sql`select 1`);
    baseline.push(performance.now() - t1);
    const rank = results.findIndex((r) => r.content.includes(answer));
    if (rank === 0) top1++;
    if (rank >= 0) {
      top3++;
      reciprocal += 1 / (rank + 1);
    }
  }
  const pct = (p: number, of = times) =>
    [...of].sort((a, b) => a - b)[Math.min(of.length - 1, Math.floor((p / 100) * of.length))]!.toFixed(1);
  const n = times.length;
  return {
    questions: n,
    "search p50 ms": pct(50),
    "search p99 ms": pct(99),
    "select 1 p50 ms": pct(50, baseline),
    "select 1 p99 ms": pct(99, baseline),
    "recall@3": (top3 / n).toFixed(3),
    "top-1": (top1 / n).toFixed(3),
    MRR: (reciprocal / n).toFixed(3),
  };
}
