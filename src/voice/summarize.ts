// The post-call request: one request to an OpenAI-compatible chat completions endpoint for the summary
// and, when the assistant has a call_analysis extension, its analysis in the same answer (one LLM
// round trip per call). An analysis whose data does not fit the schema is asked for once more.
import type { Config } from "../config";
import { log } from "../log";
import {
  analysisInstructions,
  checkAnalysis,
  failedAnalysis,
  type AnalysisPlan,
  type CallAnalysis,
} from "./call-analysis";

export type CallSummary = { shortSummary: string | null; summary: string | null; analysis?: CallAnalysis };
export type TranscriptLine = { role: string; text: string };

const noSummary: CallSummary = { shortSummary: null, summary: null };

const systemPrompt = [
  "You summarise phone calls between a caller (USER) and a voice assistant (ASSISTANT).",
  'Reply with a JSON object {"shortSummary": string, "summary": string}:',
  "shortSummary is one sentence; summary is a short paragraph with the caller's request, what was done and the outcome.",
  "Use the language of the call.",
].join(" ");

const textOrNull = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : null);

type ChatMessage = { role: string; content: string };

/**
 * Never throws: any failure (network, status, time-out, malformed reply) gives both summary fields
 * null and, with a plan, an analysis carrying the error. `timeoutMs` bounds all attempts together.
 */
export async function summarizeCall({
  transcript,
  config,
  analysis: plan,
  timeoutMs = 20_000,
}: {
  transcript: TranscriptLine[];
  config: Config;
  analysis?: AnalysisPlan | null;
  timeoutMs?: number;
}): Promise<CallSummary> {
  if (transcript.length === 0)
    return plan ? { ...noSummary, analysis: failedAnalysis("the call had no conversation") } : noSummary;
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const messages: ChatMessage[] = [
    { role: "system", content: plan ? `${systemPrompt} ${analysisInstructions(plan)}` : systemPrompt },
    { role: "user", content: transcript.map((line) => `${line.role}: ${line.text}`).join("\n") },
  ];
  try {
    const first = await complete(config, messages, signal);
    const summary = { shortSummary: textOrNull(first.shortSummary), summary: textOrNull(first.summary) };
    if (!plan) return summary;
    const checked = checkAnalysis(plan, first.analysis);
    if (checked.ok) return { ...summary, analysis: checked.analysis };
    log.warn("call analysis invalid", { attempt: 1, error: checked.message });
    const retry = await complete(
      config,
      [
        ...messages,
        { role: "assistant", content: JSON.stringify(first) },
        {
          role: "user",
          content: `Your analysis was invalid: ${checked.message}. Reply again with the whole JSON object.`,
        },
      ],
      signal,
    );
    const second = checkAnalysis(plan, retry.analysis);
    if (!second.ok) log.warn("call analysis invalid", { attempt: 2, error: second.message });
    return {
      ...summary,
      analysis: second.ok ? second.analysis : failedAnalysis(`invalid analysis: ${second.message}`),
    };
  } catch (error) {
    const message = signal.aborted ? `timed out after ${timeoutMs} ms` : (error as Error).message;
    log.warn("call summary failed", { error: message, durationMs: Math.round(performance.now() - started) });
    return plan ? { ...noSummary, analysis: failedAnalysis(message) } : noSummary;
  }
}

/** One chat completion whose content is a JSON object. */
async function complete(
  config: Config,
  messages: ChatMessage[],
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${config.voice.baseUrl.replace(/\/+$/, "")}/chat/completions`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      ...(config.voice.openaiApiKey && { Authorization: `Bearer ${config.voice.openaiApiKey}` }),
    },
    body: JSON.stringify({
      model: config.voice.summaryModel,
      temperature: 0.2,
      response_format: { type: "json_object" },
      messages,
    }),
    signal,
  });
  if (!response.ok) throw new Error(`status ${response.status}`);
  const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
  const parsed: unknown = JSON.parse(body.choices?.[0]?.message?.content ?? "");
  if (parsed === null || typeof parsed !== "object") throw new Error("the answer is not a JSON object");
  return parsed as Record<string, unknown>;
}
