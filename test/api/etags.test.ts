// Issue 30, point 2: ETag on every read by id, If-Match on PUT and DELETE, If-None-Match on GET.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { matchesStrongly, matchesWeakly, parseTagCondition } from "../../src/api/etag-match";
import { client, createTenant, startTestApi, type Tenant, type TestApi } from "../helpers/api";

let api: TestApi;
let other: TestApi;
let a: Tenant;

beforeAll(async () => {
  api = await startTestApi();
  other = await startTestApi();
  a = await createTenant(api.url, "etag");
});
afterAll(async () => {
  await api.stop();
  await other.stop();
});

const etagOf = async (path: string) => (await a.org.get(path)).headers.get("etag")!;
const newAssistant = async (name: string) =>
  `${a.P}/assistants/${(await a.org.post(`${a.P}/assistants`, { name })).body.data.id}`;
const putIf = (path: string, ifMatch: string, body: unknown) =>
  a.org.send("PUT", path, body, { "content-type": "application/json", "if-match": ifMatch });
const deleteIf = (path: string, ifMatch: string) => a.org.send("DELETE", path, undefined, { "if-match": ifMatch });

describe("ETag on a read by id", () => {
  test("strong, the same on every instance and every read, different after a change", async () => {
    const path = await newAssistant("tagged");
    const first = await etagOf(path);
    expect(first).toMatch(/^"[\w-]+"$/);
    expect(await etagOf(path)).toBe(first);
    expect((await client(other.url, a.orgToken).get(path)).headers.get("etag")).toBe(first);
    expect((await a.org.put(path, { name: "renamed" })).status).toBe(200);
    expect(await etagOf(path)).not.toBe(first);
  });

  test("every resource read by id answers one", async () => {
    const strategy = (
      await a.org.post(`${a.P}/llm-generation-strategies`, { name: "s", type: "openai_realtime", parameters: {} })
    ).body.data.id;
    const credential = (
      await a.org.post(`${a.P}/sip/credentials`, { hostname: "127.0.0.1", port: 5060, username: "u", password: "p" })
    ).body.data.id;
    const number = (
      await a.org.post(`${a.P}/sip/credentials/${credential}/phone-numbers`, { phoneNumber: "+14155550100" })
    ).body.data.id;
    const agent = (await a.org.post(`${a.P}/agents`, { name: "ag" })).body.data.id;
    for (const path of [
      `/api/v1/vendors/${a.vendorId}/organizations/${a.organizationId}`,
      `${a.P}/llm-generation-strategies/${strategy}`,
      `${a.P}/sip/credentials/${credential}`,
      `${a.P}/sip/credentials/${credential}/phone-numbers/${number}`,
      `${a.P}/agents/${agent}`,
      await newAssistant("each"),
    ])
      expect(await etagOf(path)).toMatch(/^"[\w-]+"$/);
    expect((await a.vendor.get(`/api/v1/vendors/${a.vendorId}`)).headers.get("etag")).toMatch(/^"[\w-]+"$/);
    // lists carry none: they are not one resource
    expect((await a.org.get(`${a.P}/assistants`)).headers.get("etag")).toBeNull();
  });

  test("If-None-Match answers 304 with the tag while it matches (weak comparison), 200 otherwise", async () => {
    const path = await newAssistant("cached");
    const etag = await etagOf(path);
    for (const value of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await a.org.get(path, { "if-none-match": value });
      expect(res.status).toBe(304);
      expect(res.body).toBe("");
      expect(res.headers.get("etag")).toBe(etag);
    }
    expect((await a.org.get(path, { "if-none-match": '"other"' })).status).toBe(200);
    // a value that does not parse is ignored: the full answer
    expect((await a.org.get(path, { "if-none-match": "garbage" })).status).toBe(200);
  });
});

describe("If-Match", () => {
  test("PUT with a stale tag: 412 in the envelope and nothing changed; with the current one it applies", async () => {
    const path = await newAssistant("editor");
    const seen = await etagOf(path);
    expect((await putIf(path, seen, { name: "first editor" })).status).toBe(200);
    const late = await putIf(path, seen, { name: "second editor" });
    expect(late.status).toBe(412);
    expect(late.body).toMatchObject({ success: false, message: expect.stringContaining("If-Match") });
    expect((await a.org.get(path)).body.data.name).toBe("first editor");
    const current = await etagOf(path);
    expect((await putIf(path, `"stale", ${current}`, { name: "listed" })).status).toBe(200);
    expect((await putIf(path, "*", { name: "any" })).status).toBe(200);
    // a weak tag never matches strongly
    expect((await putIf(path, `W/${await etagOf(path)}`, { name: "weak" })).status).toBe(412);
    expect((await a.org.get(path)).body.data.name).toBe("any");
  });

  test("DELETE with a stale tag: 412, still there; with the current one it goes", async () => {
    const path = await newAssistant("doomed");
    const seen = await etagOf(path);
    await a.org.put(path, { name: "changed" });
    expect((await deleteIf(path, seen)).status).toBe(412);
    expect((await a.org.get(path)).status).toBe(200);
    expect((await deleteIf(path, await etagOf(path))).status).toBe(200);
    expect((await a.org.get(path)).status).toBe(404);
    // nothing to match any more: the answer it would have had without the condition
    expect((await deleteIf(path, "*")).status).toBe(404);
  });

  test("a malformed If-Match is 400 naming the header, and nothing changes", async () => {
    const path = await newAssistant("strict");
    for (const bad of ["abc", '"unterminated', "W/", '"a" "b"', '"a";"b"', ""]) {
      const res = await putIf(path, bad, { name: "should not apply" });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, errors: [{ field: "If-Match" }] });
    }
    expect((await a.org.get(path)).body.data.name).toBe("strict");
  });

  test("organization PUT honours it too", async () => {
    const path = `/api/v1/vendors/${a.vendorId}/organizations/${a.organizationId}`;
    const seen = (await a.vendor.get(path)).headers.get("etag")!;
    const send = (tag: string, name: string) =>
      a.vendor.send("PUT", path, { name }, { "content-type": "application/json", "if-match": tag });
    expect((await send(seen, "etag-org-2")).status).toBe(200);
    expect((await send(seen, "etag-org-3")).status).toBe(412);
  });
});

describe("concurrent conditional writes", () => {
  test("two writers holding the same ETag, on two instances at once: one applies, the other is 412", async () => {
    const path = await newAssistant("contested");
    const elsewhere = client(other.url, a.orgToken);
    for (let round = 0; round < 5; round++) {
      const seen = await etagOf(path);
      const replies = await Promise.all([
        putIf(path, seen, { name: `here-${round}` }),
        elsewhere.send(
          "PUT",
          path,
          { name: `there-${round}` },
          { "content-type": "application/json", "if-match": seen },
        ),
      ]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 412]);
      const winner = replies[0]!.status === 200 ? `here-${round}` : `there-${round}`;
      expect((await a.org.get(path)).body.data.name).toBe(winner);
    }
  });

  test("a conditional write that fails in its handler lets the next one through", async () => {
    const strategy = (
      await a.org.post(`${a.P}/llm-generation-strategies`, { name: "used", type: "openai_realtime", parameters: {} })
    ).body.data.id;
    await a.org.post(`${a.P}/assistants`, { name: "user", llmAudioContentGenerationStrategyId: strategy });
    const path = `${a.P}/llm-generation-strategies/${strategy}`;
    for (let i = 0; i < 5; i++) expect((await deleteIf(path, await etagOf(path))).status).toBe(409);
    const body = { name: "still used", type: "openai_realtime", parameters: {} };
    expect((await putIf(path, await etagOf(path), body)).status).toBe(200);
  });
});

describe("RFC 9110 parsing and comparison", () => {
  test("lists, `*`, weak tags and empty list elements", () => {
    expect(parseTagCondition("*")).toBe("*");
    expect(parseTagCondition(' "a" , W/"b",, "c"')).toEqual([
      { weak: false, opaque: "a" },
      { weak: true, opaque: "b" },
      { weak: false, opaque: "c" },
    ]);
    expect(parseTagCondition('""')).toEqual([{ weak: false, opaque: "" }]);
    for (const bad of ["", ",", "a", '"a', 'w/"a"', '"a" x', '"a"b', '"a"quote"'])
      expect(parseTagCondition(bad)).toBeNull();
    expect(matchesStrongly(parseTagCondition('W/"x"')!, '"x"')).toBe(false);
    expect(matchesStrongly(parseTagCondition('"y", "x"')!, '"x"')).toBe(true);
    expect(matchesWeakly(parseTagCondition('W/"x"')!, '"x"')).toBe(true);
    expect(matchesWeakly(parseTagCondition('"y"')!, '"x"')).toBe(false);
  });
});
