// Issue 40, item 14: the types of a body hold inside type-specific parameters too. Every number,
// integer and boolean field of every extension type's and strategy type's parameters, found by walking
// their schemas, is sent as a string ("3" for 3): each is a 400 naming the field, never stored.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import {
  CallAnalysisParameters,
  CallContextParameters,
  KnowledgeBaseParameters,
  ToolWebhookParameters,
  TransferCallParameters,
} from "../../src/models/assistants";
import { strategyParameters } from "../../src/models/strategies";
import { startApiWithTwoTenants, toolSchema, type Tenant, type TestApi } from "../helpers/api";

let api: TestApi;
let a: Tenant;
beforeAll(async () => {
  ({ api, a } = await startApiWithTwoTenants());
});
afterAll(() => api.stop());

type Leaf = { path: (string | number)[]; value: number | boolean };

/** Every scalar the JSON types tell apart from a string, with a value the schema accepts. */
function scalarLeaves(schema: any, path: (string | number)[] = []): Leaf[] {
  if (schema.type === "object")
    return Object.entries<any>(schema.properties ?? {}).flatMap(([k, s]) => scalarLeaves(s, [...path, k]));
  if (schema.type === "array") return scalarLeaves(schema.items, [...path, 0]);
  if (schema.type === "boolean") return [{ path, value: true }];
  if (schema.type === "integer" || schema.type === "number") return [{ path, value: schema.minimum ?? 1 }];
  // a union that holds a number (also one that takes a numeric string besides)
  const numeric = (schema.anyOf ?? []).find((s: any) => s.type === "integer" || s.type === "number");
  if (numeric) return scalarLeaves(numeric, path);
  const constants = (schema.anyOf ?? []).map((s: any) => s.const);
  if (constants.length > 0 && constants.every((c: unknown) => typeof c === "number"))
    return [{ path, value: constants[0] }];
  return [];
}

function withValue(base: Record<string, unknown>, path: (string | number)[], value: unknown) {
  const copy = structuredClone(base);
  let node: any = copy;
  for (const key of path.slice(0, -1)) node = node[key] ??= {};
  node[path.at(-1)!] = value;
  return copy;
}

const fieldName = (path: (string | number)[]) => path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");

const extensionTypes: Record<string, [TSchema, Record<string, unknown>]> = {
  tool_webhook: [
    ToolWebhookParameters,
    { name: "lookup_order", serverUrl: "https://tools.example.com/x", schema: toolSchema() },
  ],
  knowledge_base: [KnowledgeBaseParameters, { url: "https://kb.example.com/search" }],
  transfer_call: [TransferCallParameters, { destinations: [{ to: "+15551230000", description: "front desk" }] }],
  call_context: [CallContextParameters, { url: "https://context.example.com/" }],
  call_analysis: [CallAnalysisParameters, { schema: JSON.stringify({ type: "object" }) }],
};

describe("a string where the schema wants a number or a boolean", () => {
  const tested: string[] = [];
  afterAll(() => {
    // the walk found the fields the issue names
    expect(tested).toEqual(
      expect.arrayContaining([
        "knowledge_base.maxResults",
        "call_context.timeoutMs",
        "transfer_call.ringTimeoutSeconds",
        "openai_realtime.temperature",
        "pipeline.voice.useSpeakerBoost",
      ]),
    );
  });

  for (const [type, [schema, base]] of Object.entries(extensionTypes))
    test(`extension ${type}`, async () => {
      const body = (parameters: Record<string, unknown>) => ({ name: type, extensions: [{ type, parameters }] });
      expect((await a.org.post(`${a.P}/assistants`, body(base))).status).toBe(201);
      for (const { path, value } of scalarLeaves(schema)) {
        const field = `extensions[0].parameters${fieldName(path)}`;
        const typed = await a.org.post(`${a.P}/assistants`, body(withValue(base, path, value)));
        expect(typed.status, field).toBe(201);
        const res = await a.org.post(`${a.P}/assistants`, body(withValue(base, path, String(value))));
        expect(res.status, field).toBe(400);
        expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
        tested.push(`${type}${fieldName(path)}`);
      }
    });

  for (const [type, schema] of Object.entries(strategyParameters))
    test(`strategy ${type}`, async () => {
      const post = (parameters: Record<string, unknown>) =>
        a.org.post(`${a.P}/llm-generation-strategies`, { name: type, type, parameters });
      for (const { path, value } of scalarLeaves(schema)) {
        const field = `parameters${fieldName(path)}`;
        const res = await post(withValue({}, path, String(value)));
        expect(res.status, field).toBe(400);
        expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
        tested.push(`${type}${fieldName(path)}`);
      }
    });
});
