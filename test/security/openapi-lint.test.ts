// Issue 30, point 3: the served OpenAPI document is valid for the tools clients feed it to. Redocly CLI
// (recommended) and Spectral (spectral:oas) run on /swagger/json as a user would run them; both must
// report 0 errors. The conventions of design.md are documented where they apply.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { client, startTestApi, type TestApi } from "../helpers/api";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name: string) => join(repoRoot, "node_modules/.bin", name);
let api: TestApi;
let doc: any;
let dir: string;
let file: string;

beforeAll(async () => {
  api = await startTestApi();
  doc = (await client(api.url).get("/swagger/json")).body;
  dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
  file = join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(doc));
});
afterAll(async () => {
  await api.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function run(command: string[]) {
  // tests talk to 127.0.0.1 only: no telemetry, no update check
  const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
  const proc = Bun.spawn(command, { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = [await new Response(proc.stdout).text(), await new Response(proc.stderr).text()];
  await proc.exited;
  return { stdout, stderr };
}

const METHODS = ["get", "put", "post", "delete"];
const operations = () =>
  Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, operation: item[method] })),
  );

describe("the tools clients use", () => {
  test("Redocly CLI (recommended): 0 errors", async () => {
    const { stdout } = await run([bin("redocly"), "lint", "--extends", "recommended", "--format", "json", file]);
    const problems: { ruleId: string; severity: string; message: string }[] = JSON.parse(stdout).problems;
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
  }, 120_000);

  test("Spectral (spectral:oas): 0 errors", async () => {
    const ruleset = join(repoRoot, "test/security/fixtures/spectral.yaml");
    const { stdout } = await run([bin("spectral"), "lint", "-r", ruleset, "-f", "json", "--quiet", file]);
    // severity 0 is error (1 warn, 2 info, 3 hint)
    const problems: { code: string; severity: number; message: string }[] = JSON.parse(stdout);
    expect(problems.filter((p) => p.severity === 0)).toEqual([]);
  }, 120_000);
});

describe("what the document declares", () => {
  test("OpenAPI 3.1 (its schemas use type null and const), servers set, every response described", () => {
    expect(doc.openapi).toBe("3.1.0");
    const text = JSON.stringify(doc);
    expect(text).toContain('"type":"null"');
    expect(doc.servers.length).toBeGreaterThan(0);
    for (const { operation } of operations())
      for (const response of Object.values<any>(operation.responses))
        expect(typeof response.description).toBe("string");
  });

  test("timestamps are string + date-time, nowhere a Date type", () => {
    expect(JSON.stringify(doc)).not.toContain('"Date"');
    const task = doc.paths["/api/v1/vendors/{vendorId}/organizations/{organizationId}/agent-tasks/{agentTaskId}"].get;
    const data = task.responses["200"].content["application/json"].schema.properties.data;
    expect(data.properties.createdAt).toMatchObject({ type: "string", format: "date-time" });
  });

  test("every POST takes Idempotency-Key and documents 409 and 422 and the replay header", () => {
    const posts = operations().filter((o) => o.method === "post");
    expect(posts.length).toBeGreaterThan(5);
    for (const { operation } of posts) {
      expect(operation.parameters).toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["400", "409", "422"]));
      const success = Object.entries<any>(operation.responses).find(([s]) => s.startsWith("2"))![1];
      expect(Object.keys(success.headers)).toContain("Idempotent-Replayed");
    }
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({
      name: "Idempotency-Key",
      in: "header",
      schema: { maxLength: 255 },
    });
  });

  test("reads by id carry ETag, If-None-Match and 304; PUT and DELETE by id If-Match and 412", () => {
    const byId = operations().filter((o) => /\{\w+\}$/.test(o.path));
    const reads = byId.filter((o) => o.method === "get");
    const writes = byId.filter((o) => o.method === "put" || o.method === "delete");
    expect(reads.length).toBeGreaterThan(5);
    expect(writes.length).toBeGreaterThan(5);
    for (const { operation } of reads) {
      expect(operation.parameters).toContainEqual({ $ref: "#/components/parameters/IfNoneMatch" });
      expect(Object.keys(operation.responses["200"].headers)).toContain("ETag");
      expect(operation.responses["304"]).toBeDefined();
    }
    for (const { operation } of writes) {
      expect(operation.parameters).toContainEqual({ $ref: "#/components/parameters/IfMatch" });
      expect(operation.responses["412"].content["application/json"].schema).toEqual({
        $ref: "#/components/schemas/ErrorEnvelope",
      });
    }
  });
});

describe("what the API answers, documented (issue 28, point 6)", () => {
  const P = "/api/v1/vendors/{vendorId}/organizations/{organizationId}";

  test("the recording documents the audio and 401, 403, 404 and 429 in the envelope", () => {
    const responses = doc.paths[`${P}/agent-tasks/{agentTaskId}/recording`].get.responses;
    expect(Object.keys(responses["200"].content)).toEqual(["audio/wav"]);
    for (const status of ["401", "403", "404", "429"])
      expect(responses[status].content["application/json"].schema).toEqual({
        $ref: "#/components/schemas/ErrorEnvelope",
      });
  });

  test("a strategy body is one shape per type, as validation accepts", () => {
    for (const [path, method] of [
      [`${P}/llm-generation-strategies`, "post"],
      [`${P}/llm-generation-strategies/{strategyId}`, "put"],
    ] as const) {
      const schema = doc.paths[path][method].requestBody.content["application/json"].schema;
      expect(schema.discriminator.propertyName).toBe("type");
      expect(Object.keys(schema.discriminator.mapping)).toEqual(["pipeline", "openai_realtime"]);
      expect(schema.oneOf).toHaveLength(2);
    }
    const { StrategyWritePipeline: pipeline, StrategyWriteOpenaiRealtime: realtime } = doc.components.schemas;
    expect(pipeline.properties.type.const).toBe("pipeline");
    expect(realtime.properties.type.const).toBe("openai_realtime");
    // fields of one engine are not offered to the other, and no unknown field is accepted
    expect(Object.keys(pipeline.properties.parameters.properties)).toContain("stt");
    expect(Object.keys(realtime.properties.parameters.properties)).not.toContain("stt");
    expect(realtime.properties.parameters.additionalProperties).toBe(false);
  });

  test("/readyz documents its 503 with a required readable message", () => {
    const schema = doc.paths["/readyz"].get.responses["503"].content["application/json"].schema;
    expect(schema.required).toContain("message");
    expect(schema.properties.message.type).toBe("string");
  });
});
