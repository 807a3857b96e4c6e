// Issue 10, point 4: the body limit is enforced while reading (413 in the envelope), nesting is
// bounded before any validator recurses (400 naming the field), free-form parameters have their own
// size and depth limits, and none of it costs the API process memory: measured on a spawned API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from "../../src/api/json-body";
import { MAX_PARAMETERS_BYTES, MAX_PARAMETERS_DEPTH } from "../../src/services/free-form-limits";
import { createTenant, type Tenant } from "../helpers/api";
import { spawnApi } from "../helpers/api-process";

const MB = 1024 * 1024;
let proc: ChildProcess;
let url: string;
let tenant: Tenant;

// the API as its own process, so its memory is its own
beforeAll(async () => {
  const api = await spawnApi();
  proc = api.proc;
  url = api.url;
  tenant = await createTenant(url, "limits");
}, 30_000);
afterAll(() => void proc?.kill());

const rssBytes = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))![1]) * 1024;

const post = (path: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.orgToken}`, "content-type": "application/json", ...headers },
    body,
    // a connection per request: after a 413 the server closes the connection it did not read to the end
    keepalive: false,
  });

/** A JSON assistant body whose text is `bytes` long, as one string (or as a stream with no Content-Length). */
function bigAssistant(bytes: number): string {
  const head = '{"name":"big","systemPrompt":"';
  return `${head + "x".repeat(bytes - head.length - 2)}"}`;
}

function streamOf(text: string, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + chunk));
      offset += chunk;
    },
  });
}

const jsonOf = (res: Response): Promise<any> => res.json();
const deepParameters = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

describe("body size", () => {
  test("a 20 MB body with Content-Length: 413 in the envelope, before it is read", async () => {
    const res = await post(`${tenant.P}/assistants`, bigAssistant(20 * MB));
    expect(res.status).toBe(413);
    expect(await jsonOf(res)).toMatchObject({
      success: false,
      data: null,
      message: `request body larger than ${MAX_BODY_BYTES} bytes`,
      errors: [{ field: "body" }],
    });
  });

  test("a 20 MB body streamed without Content-Length: 413 once the limit is passed", async () => {
    const res = await post(`${tenant.P}/assistants`, streamOf(bigAssistant(20 * MB)));
    expect(res.status).toBe(413);
    expect((await jsonOf(res)).success).toBe(false);
  });

  test("a body just under the limit is accepted", async () => {
    const extensions = Array.from({ length: 16 }, () => ({ type: "custom", parameters: { blob: "x".repeat(60_000) } }));
    const body = JSON.stringify({ name: "near the limit", extensions });
    expect(body.length).toBeGreaterThan(MAX_BODY_BYTES - 128 * 1024);
    expect(body.length).toBeLessThan(MAX_BODY_BYTES);
    expect((await post(`${tenant.P}/assistants`, body)).status).toBe(201);
  });
});

describe("nesting and free-form parameters", () => {
  test("parameters nested 100,000 deep: 400 naming the field, not a 500", async () => {
    const body = `{"name":"deep","extensions":[{"type":"custom","parameters":${deepParameters(100_000)}}]}`;
    const res = await post(`${tenant.P}/assistants`, body);
    expect(res.status).toBe(400);
    const json = await jsonOf(res);
    expect(json.errors[0]).toEqual({
      field: "extensions[0].parameters.a.a.a.a.a",
      message: `nested deeper than ${MAX_JSON_DEPTH} levels`,
    });
  });

  test("parameters within the body's depth but over their own: 400 naming the parameters", async () => {
    const body = {
      name: "deep",
      callEventHooks: [{ type: "custom_hook", parameters: JSON.parse(deepParameters(MAX_PARAMETERS_DEPTH + 1)) }],
    };
    const res = await post(`${tenant.P}/assistants`, JSON.stringify(body));
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).errors).toContainEqual({
      field: "callEventHooks[0].parameters",
      message: `nested deeper than ${MAX_PARAMETERS_DEPTH} levels`,
    });
  });

  test("parameters larger than their limit: 400 naming them", async () => {
    const body = {
      name: "wide",
      extensions: [{ type: "custom", parameters: { blob: "x".repeat(MAX_PARAMETERS_BYTES) } }],
    };
    const res = await post(`${tenant.P}/assistants`, JSON.stringify(body));
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).errors).toContainEqual({
      field: "extensions[0].parameters",
      message: `larger than ${MAX_PARAMETERS_BYTES} bytes as JSON`,
    });
  });

  test("strategy parameters are bounded the same way", async () => {
    const body = {
      name: "s",
      type: "openai_realtime",
      parameters: JSON.parse(deepParameters(MAX_PARAMETERS_DEPTH + 1)),
    };
    const res = await post(`${tenant.P}/llm-generation-strategies`, JSON.stringify(body));
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).errors).toContainEqual({
      field: "parameters",
      message: `nested deeper than ${MAX_PARAMETERS_DEPTH} levels`,
    });
  });
});

test("memory: rounds of four 20 MB bodies at once (declared and streamed) and deep nesting do not grow the API's RSS", async () => {
  const burst = () =>
    Promise.all([
      post(`${tenant.P}/assistants`, bigAssistant(20 * MB)).then((r) => r.status),
      post(`${tenant.P}/assistants`, bigAssistant(20 * MB)).then((r) => r.status),
      post(`${tenant.P}/assistants`, streamOf(bigAssistant(20 * MB))).then((r) => r.status),
      post(`${tenant.P}/assistants`, streamOf(bigAssistant(20 * MB))).then((r) => r.status),
      post(
        `${tenant.P}/assistants`,
        `{"name":"d","extensions":[{"type":"c","parameters":${deepParameters(100_000)}}]}`,
      ).then((r) => r.status),
    ]);
  // the first rounds of a fresh process allocate for code paths and buffers it keeps, not per body
  for (let i = 0; i < 3; i++) expect(await burst()).toEqual([413, 413, 413, 413, 400]);
  const before = rssBytes();
  const rounds = 5;
  for (let i = 0; i < rounds; i++) expect(await burst()).toEqual([413, 413, 413, 413, 400]);
  const grown = rssBytes() - before;
  // 100 MB offered per round; before the limits, four 20 MB bodies grew it by about 950 MB
  console.error(
    `[input-limits] API RSS ${(before / MB).toFixed(1)} MB, after ${rounds} more rounds +${(grown / MB).toFixed(1)} MB`,
  );
  // 25 refused requests (500 MB offered): about a body limit each at most; RSS itself moves by ~10 MB either way
  expect(grown).toBeLessThan(32 * MAX_BODY_BYTES);
  // 8 rounds of 80 MB: 15 s on the idle machine, over 60 s once on a loaded CI run
}, 150_000);
