// Answers a knowledge_base tool call: the customer's search service through the outbound guard, or
// our own search. The LLM gets at most maxResults bounded results, or the generic error string.
import type { OutboundGuard } from "../net/outbound-guard";
import { isObject } from "../lib/is-object";
import type { KnowledgeTool } from "../voice/tools";
import { postToolJson, toolFailureMessage, type ToolWebhookResult } from "./tool-webhook";

export type KnowledgeResult = { content: string; title?: string; source?: string | null; score?: number };
/** Our own search (services/knowledge/search.ts), injected so the call's logic stays free of the database. */
export type KnowledgeSearch = (
  knowledgeBaseId: string,
  query: string,
  maxResults: number,
) => Promise<KnowledgeResult[]>;

export type KnowledgeCall = {
  tool: KnowledgeTool;
  query: string;
  callId: string;
  guard: OutboundGuard;
  timeoutMs: number;
  search: KnowledgeSearch;
};

// what one result may put before the LLM; a service's huge answer is refused, not passed on
const MAX_RESULT_CHARS = 4_000;
const MAX_RESPONSE_BYTES = 512 * 1024;

export async function runKnowledgeTool(call: KnowledgeCall): Promise<ToolWebhookResult> {
  const { tool, query, callId, guard, timeoutMs, search } = call;
  const { maxResults, knowledge } = tool;
  if ("knowledgeBaseId" in knowledge) return searchOwn(search, knowledge.knowledgeBaseId, query, maxResults, timeoutMs);
  const answer = await postToolJson({
    url: knowledge.url,
    headers: knowledge.authToken ? { authorization: `Bearer ${knowledge.authToken}` } : {},
    body: { type: "knowledge_base_search", query, maxResults, callId },
    guard,
    timeoutMs,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  });
  if (!answer.ok) return answer;
  const results = readResults(answer.body, maxResults);
  const { status, durationMs } = answer;
  if (typeof results === "string") return { output: toolFailureMessage, ok: false, status, durationMs, error: results };
  return { output: formatResults(results), ok: true, status, durationMs };
}

async function searchOwn(
  search: KnowledgeSearch,
  knowledgeBaseId: string,
  query: string,
  maxResults: number,
  timeoutMs: number,
): Promise<ToolWebhookResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
  try {
    const results = await Promise.race([search(knowledgeBaseId, query, maxResults), timeout]);
    if (results === "timeout")
      return {
        output: toolFailureMessage,
        ok: false,
        status: null,
        durationMs: elapsed(),
        error: `timed out after ${timeoutMs} ms`,
      };
    return { output: formatResults(results), ok: true, status: null, durationMs: elapsed() };
  } catch (error) {
    return {
      output: toolFailureMessage,
      ok: false,
      status: null,
      durationMs: elapsed(),
      error: (error as Error).message,
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The service's answer: `{"results":[{content, source?, score?}]}`, or plain text (one result). Any
 * other JSON is garbage and a failure: nothing of it reaches the LLM.
 */
function readResults(body: string, maxResults: number): KnowledgeResult[] | string {
  const text = body.trim();
  if (!text.startsWith("{") && !text.startsWith("[")) return text ? [{ content: bounded(text) }] : [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return "the answer is not valid JSON";
  }
  if (!isObject(parsed) || !Array.isArray(parsed.results)) return "the answer has no results array";
  const results: KnowledgeResult[] = [];
  for (const item of parsed.results.slice(0, maxResults)) {
    if (!isObject(item) || typeof item.content !== "string") return "a result has no content string";
    results.push({
      content: bounded(item.content),
      ...(typeof item.source === "string" && { source: item.source.slice(0, 2048) }),
      ...(typeof item.score === "number" && Number.isFinite(item.score) && { score: item.score }),
    });
  }
  return results;
}

const bounded = (text: string) => (text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}…` : text);

/** What the LLM reads: the results as JSON, best first. */
const formatResults = (results: KnowledgeResult[]) =>
  JSON.stringify({ results: results.map((r) => ({ ...r, content: bounded(r.content) })) });
