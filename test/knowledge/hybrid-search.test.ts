// Hybrid knowledge search against a real Postgres and a local OpenAI-compatible embeddings provider: a
// question meets a chunk it shares no word with, the provider's failures leave searches full-text,
// tenants' and bases' vectors stay apart. Nearest chunks come from pgvector's index where the Postgres
// has the extension, in plain SQL where it has not (as here: Debian has no pgvector package).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { embeddingsEndpoint } from "../../src/services/knowledge/embeddings-client";
import { fuse, knowledgeSearchFor } from "../../src/services/knowledge/knowledge-search";
import { createTenant, startTestApi, type TestApi, type Tenant } from "../helpers/api";
import { answerEmbeddings, FAKE_DIMS } from "../helpers/fake-embeddings";
import { startReceiver, type Receiver } from "../helpers/receiver";

let provider: Receiver;
let api: TestApi;
let plainApi: TestApi;
let a: Tenant;
let b: Tenant;
let down = false;
let delayMs = 0;
const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });

beforeAll(async () => {
  provider = await startReceiver((req) => {
    if (down) return { status: 503, body: "overloaded" };
    const reply = answerEmbeddings(req);
    return reply === "hang" ? reply : { ...reply, delayMs };
  });
  api = await startTestApi({
    EMBEDDINGS_URL: `${provider.url}/v1`,
    EMBEDDINGS_MODEL: "fake-embed-1",
    EMBEDDINGS_API_KEY: "emb-secret-key",
    // the default: a question embedded within 300 ms, as before, missed it on a loaded machine
    EMBEDDINGS_TIMEOUT_MS: "1500",
  });
  plainApi = await startTestApi();
  [a, b] = await Promise.all([createTenant(api.url, "hybrid-a"), createTenant(api.url, "hybrid-b")]);
});
afterAll(async () => {
  await Promise.all([api?.stop(), plainApi?.stop(), provider?.close()]);
  await close();
});

const refunds = "Returns are reimbursed within 30 days of delivery.";
const gettingStarted = "Getting started: get the app from the store and sign in.";

async function baseWith(tenant: Tenant, docs: { title: string; content: string }[]) {
  const id = (await tenant.org.post(`${tenant.P}/knowledge-bases`, { name: "hybrid" })).body.data.id as string;
  for (const doc of docs) {
    const added = await tenant.org.post(`${tenant.P}/knowledge-bases/${id}/documents`, doc);
    expect(added.status).toBe(201);
  }
  return id;
}
const search = (api: TestApi, tenant: Tenant, id: string, q: string) =>
  api.client(tenant.orgToken).get(`${tenant.P}/knowledge-bases/${id}/search?q=${encodeURIComponent(q)}&maxResults=3`);

describe("hybrid knowledge search", () => {
  test("nearest chunks through pgvector where the Postgres has it, in plain SQL where it has not", async () => {
    const pgvector = await db.execute(sql`select 1 from pg_available_extensions where name = 'vector'`);
    const index = await knowledgeSearchFor(db, {
      embeddingsUrl: `${provider.url}/v1`,
      embeddingsModel: "fake-embed-1",
      embeddingsApiKey: null,
      embeddingsTimeoutMs: 1_500,
    }).prepare();
    expect(index?.name).toBe(pgvector.length > 0 ? "pgvector" : "plain SQL");
  });

  test("a question meets the chunk that answers it by meaning, where full-text search finds nothing", async () => {
    const id = await baseWith(a, [
      { title: "Policy", content: refunds },
      { title: "Start", content: gettingStarted },
    ]);
    const hybrid = await search(api, a, id, "I want my money back");
    expect(hybrid.status).toBe(200);
    expect(hybrid.body.data[0].content).toBe(refunds);
    // the same base, the same database, without embeddings: no chunk shares a word with the question
    expect((await search(plainApi, a, id, "I want my money back")).body.data).toEqual([]);
    // a word both share still counts: the chunk found by its words and its meaning ranks first
    const both = await search(api, a, id, "get the app");
    expect(both.body.data[0].content).toBe(gettingStarted);
    // the upload sent every chunk, with the operator's key and model, to the operator's endpoint
    const uploads = provider.requests.filter((r) => JSON.parse(r.body.toString()).input.includes(refunds));
    expect(uploads.length).toBeGreaterThan(0);
    expect(uploads[0]!.path).toBe("/v1/embeddings");
    expect(uploads[0]!.headers.authorization).toBe("Bearer emb-secret-key");
    expect(JSON.parse(uploads[0]!.body.toString()).model).toBe("fake-embed-1");
    const stored = await db.execute<{ model: string; dims: number; n: number }>(sql`
      select model, dims, count(*)::int as n from knowledge_chunk_embeddings where knowledge_base_id = ${id} group by 1, 2`);
    expect([...stored]).toEqual([{ model: "fake-embed-1", dims: FAKE_DIMS, n: 2 }]);
  });

  test("vectors stay in their base: another tenant's closer chunk is never returned", async () => {
    const theirs = await baseWith(b, [{ title: "Theirs", content: refunds }]);
    const ours = await baseWith(a, [{ title: "Hours", content: "The shop opens at nine." }]);
    const found = await search(api, a, ours, "money back");
    expect(found.body.data.map((r: { title: string }) => r.title)).toEqual(["Hours"]);
    expect((await search(api, a, theirs, "money back")).status).toBe(404);
  });

  test("a provider that is down or slow leaves the search full-text", async () => {
    const id = await baseWith(a, [
      { title: "Policy", content: refunds },
      { title: "Start", content: gettingStarted },
    ]);
    down = true;
    try {
      const words = await search(api, a, id, "can I get my money back?");
      expect(words.status).toBe(200);
      expect(words.body.data.map((r: { content: string }) => r.content)).toEqual([gettingStarted]);
    } finally {
      down = false;
    }
    delayMs = 5_000; // over EMBEDDINGS_TIMEOUT_MS (1,500)
    try {
      const words = await search(api, a, id, "can I get my money back?");
      expect(words.body.data.map((r: { content: string }) => r.content)).toEqual([gettingStarted]);
    } finally {
      delayMs = 0;
    }
    expect((await search(api, a, id, "I want my money back")).body.data[0].content).toBe(refunds);
  });

  test("an upload while the provider is down stores the document; the next pass embeds it", async () => {
    const id = await baseWith(a, []);
    down = true;
    try {
      const added = await a.org.post(`${a.P}/knowledge-bases/${id}/documents`, { title: "Policy", content: refunds });
      expect(added.status).toBe(201);
      expect(added.body.data.chunks).toBe(1);
    } finally {
      down = false;
    }
    // found by its words meanwhile
    expect((await search(api, a, id, "reimbursed")).body.data[0].content).toBe(refunds);
    expect((await search(api, a, id, "money back")).body.data).toEqual([]);
    // the next upload's pass embeds what the failed one left
    await a.org.post(`${a.P}/knowledge-bases/${id}/documents`, { title: "Start", content: gettingStarted });
    expect((await search(api, a, id, "money back")).body.data[0].content).toBe(refunds);
  });

  test("deleting a document deletes its vectors", async () => {
    const id = await baseWith(a, [{ title: "Policy", content: refunds }]);
    const docs = await a.org.get(`${a.P}/knowledge-bases/${id}/documents`);
    const count = async () =>
      (
        await db.execute<{ n: number }>(
          sql`select count(*)::int as n from knowledge_chunk_embeddings where knowledge_base_id = ${id}`,
        )
      )[0]!.n;
    expect(await count()).toBe(1);
    expect((await a.org.delete(`${a.P}/knowledge-bases/${id}/documents/${docs.body.data[0].id}`)).status).toBe(200);
    expect(await count()).toBe(0);
  });
});

describe("pieces", () => {
  test("reciprocal rank fusion: a chunk in both lists ranks above one ranked first in only one", () => {
    const hit = (content: string) => ({ documentId: "d", title: "t", source: null, content });
    const fused = fuse(
      [
        [hit("x"), hit("both")],
        [hit("y"), hit("both")],
      ],
      3,
    );
    expect(fused.map((r) => r.content)).toEqual(["both", "x", "y"]);
    expect(fused[0]!.score).toBeCloseTo(2 / 62, 6);
  });

  test("EMBEDDINGS_URL is a base URL; one that names the endpoint is kept", () => {
    expect(embeddingsEndpoint("https://api.openai.com/v1")).toBe("https://api.openai.com/v1/embeddings");
    expect(embeddingsEndpoint("http://h/v1/")).toBe("http://h/v1/embeddings");
    expect(embeddingsEndpoint("http://h/custom/embeddings")).toBe("http://h/custom/embeddings");
  });
});
