import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
});
afterAll(() => api.stop());

const text = (type: string) => ({ "content-type": type });

describe("knowledge bases", () => {
  test("create, read, list, replace and delete; counts follow the documents", async () => {
    const created = await a.org.post(`${a.P}/knowledge-bases`, { name: "Help center", description: "FAQ" });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data).toEqual({ id, name: "Help center", description: "FAQ", documents: 0, chunks: 0 });
    const doc = await a.org.post(`${a.P}/knowledge-bases/${id}/documents`, {
      title: "Refunds",
      content: "# Refunds\n\nWe refund any order within 30 days.\n\n## Shipping\n\nParcels ship on Mondays.",
      source: "https://example.com/faq",
    });
    expect(doc.status).toBe(201);
    expect(doc.body.data).toMatchObject({ title: "Refunds", source: "https://example.com/faq", chunks: 2 });
    expect(doc.body.data.bytes).toBeGreaterThan(50);
    expect((await a.org.get(`${a.P}/knowledge-bases/${id}`)).body.data).toMatchObject({ documents: 1, chunks: 2 });
    const replaced = await a.org.put(`${a.P}/knowledge-bases/${id}`, { name: "Help" });
    expect(replaced.body.data).toMatchObject({ name: "Help", description: null });
    const list = await a.org.get(`${a.P}/knowledge-bases?sort=name,desc`);
    expect(list.body.data.map((k: { id: string }) => k.id)).toContain(id);
    const docs = await a.org.get(`${a.P}/knowledge-bases/${id}/documents`);
    expect(docs.body.totalElements).toBe(1);
    expect((await a.org.delete(`${a.P}/knowledge-bases/${id}/documents/${doc.body.data.id}`)).status).toBe(200);
    expect((await a.org.get(`${a.P}/knowledge-bases/${id}`)).body.data).toMatchObject({ documents: 0, chunks: 0 });
    expect((await a.org.get(`${a.P}/knowledge-bases/${id}/search?q=refund`)).body.data).toEqual([]);
    expect((await a.org.delete(`${a.P}/knowledge-bases/${id}`)).status).toBe(200);
    expect((await a.org.get(`${a.P}/knowledge-bases/${id}`)).status).toBe(404);
  });

  test("documents as text/plain, text/markdown and text/html (tags, scripts and styles removed)", async () => {
    const id = (await a.org.post(`${a.P}/knowledge-bases`, { name: "formats" })).body.data.id;
    const path = `${a.P}/knowledge-bases/${id}/documents`;
    const plain = await a.org.send("POST", `${path}?title=Hours`, "We open at nine.", text("text/plain"));
    expect(plain.status).toBe(201);
    expect(plain.body.data).toMatchObject({ title: "Hours", source: null, chunks: 1 });
    const md = await a.org.send(
      "POST",
      `${path}?title=Pets&source=pets.md`,
      "# Pets\n\nDogs welcome.",
      text("text/markdown; charset=utf-8"),
    );
    expect(md.body.data).toMatchObject({ title: "Pets", source: "pets.md", chunks: 1 });
    const html = `<html><head><title>x</title><style>.a{color:red}</style><script>var secretScript=1</script></head>
      <body><h1>Parking</h1><p>Free parking behind the <b>building</b>.</p><script>alert("nope")</script></body></html>`;
    const page = await a.org.send("POST", `${path}?title=Parking`, html, text("text/html"));
    expect(page.status).toBe(201);
    const found = await a.org.get(`${a.P}/knowledge-bases/${id}/search?q=where%20can%20I%20park`);
    expect(found.body.data[0]).toMatchObject({
      title: "Parking",
      content: "Parking\n\nFree parking behind the building.",
    });
    const script = await a.org.get(`${a.P}/knowledge-bases/${id}/search?q=secretScript%20alert%20color`);
    expect(script.body.data).toEqual([]);
  });

  test("bad input: 400 naming the field, 413 over 5 MB, nothing stored", async () => {
    const id = (await a.org.post(`${a.P}/knowledge-bases`, { name: "bad" })).body.data.id;
    const path = `${a.P}/knowledge-bases/${id}/documents`;
    const noName = await a.org.post(`${a.P}/knowledge-bases`, { description: "x" });
    expect(noName.status).toBe(400);
    expect(noName.body.errors.map((e: { field: string }) => e.field)).toContain("name");
    const unknown = await a.org.post(path, { title: "t", content: "c", extra: 1 });
    expect(unknown.status).toBe(400);
    const noTitle = await a.org.send("POST", path, "hello", text("text/plain"));
    expect(noTitle.status).toBe(400);
    expect(noTitle.body.errors[0].field).toBe("title");
    const empty = await a.org.post(path, { title: "t", content: "   \n  " });
    expect(empty.status).toBe(400);
    expect(empty.body.errors[0].field).toBe("content");
    const onlyTags = await a.org.send("POST", `${path}?title=x`, "<script>x()</script><p> </p>", text("text/html"));
    expect(onlyTags.status).toBe(400);
    const binary = await a.org.send("POST", `${path}?title=x`, "abc\u0000\u0001\u0002def", text("text/plain"));
    expect(binary.status).toBe(400);
    const huge = await a.org.send("POST", `${path}?title=x`, "word ".repeat(1_100_000), text("text/plain"));
    expect(huge.status).toBe(413);
    const pdf = await a.org.send("POST", `${path}?title=x`, "%PDF", text("application/pdf"));
    expect(pdf.status).toBe(400);
    // elsewhere the API still speaks JSON only
    const elsewhere = await a.org.send("POST", `${a.P}/knowledge-bases`, "name", text("text/plain"));
    expect(elsewhere.status).toBe(400);
    expect((await a.org.get(`${a.P}/knowledge-bases/${id}`)).body.data).toMatchObject({ documents: 0 });
    const search = `${a.P}/knowledge-bases/${id}/search`;
    for (const q of ["?q=x&maxResults=0", "?q=x&maxResults=21", "?q=x&maxResults=two"]) {
      const res = await a.org.get(search + q);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe("maxResults");
    }
    expect((await a.org.get(`${search}?maxResults=2`)).status).toBe(400);
  });

  test("a document of almost 5 MB is taken", async () => {
    const id = (await a.org.post(`${a.P}/knowledge-bases`, { name: "big" })).body.data.id;
    const para = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.\n\n";
    const body = para.repeat(Math.floor((4.5 * 1024 * 1024) / para.length));
    const res = await a.org.send("POST", `${a.P}/knowledge-bases/${id}/documents?title=big`, body, text("text/plain"));
    expect(res.status).toBe(201);
    expect(res.body.data.chunks).toBeGreaterThan(3000);
  });

  test("another tenant's knowledge base is 404 everywhere", async () => {
    const id = (await a.org.post(`${a.P}/knowledge-bases`, { name: "private" })).body.data.id;
    const doc = await a.org.post(`${a.P}/knowledge-bases/${id}/documents`, { title: "t", content: "secret plans" });
    for (const res of [
      await b.org.get(`${b.P}/knowledge-bases/${id}`),
      await b.org.put(`${b.P}/knowledge-bases/${id}`, { name: "mine" }),
      await b.org.delete(`${b.P}/knowledge-bases/${id}`),
      await b.org.get(`${b.P}/knowledge-bases/${id}/documents`),
      await b.org.post(`${b.P}/knowledge-bases/${id}/documents`, { title: "t", content: "c" }),
      await b.org.delete(`${b.P}/knowledge-bases/${id}/documents/${doc.body.data.id}`),
      await b.org.get(`${b.P}/knowledge-bases/${id}/search?q=secret`),
    ])
      expect(res.status).toBe(404);
    expect((await b.org.get(`${a.P}/knowledge-bases/${id}`)).status).toBe(403);
    expect((await a.org.get(`${a.P}/knowledge-bases/${id}/search?q=secret`)).body.data).toHaveLength(1);
  });
});
