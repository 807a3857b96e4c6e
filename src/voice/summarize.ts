// The post-call summary: one request to an OpenAI-compatible chat completions endpoint.
import type { Config } from "../config";
import { log } from "../log";

export type CallSummary = { shortSummary: string | null; summary: string | null };
export type TranscriptLine = { role: string; text: string };

const noSummary: CallSummary = { shortSummary: null, summary: null };

const systemPrompt = [
  "You summarise phone calls between a caller (USER) and a voice assistant (ASSISTANT).",
  'Reply with a JSON object {"shortSummary": string, "summary": string}:',
  "shortSummary is one sentence; summary is a short paragraph with the caller's request, what was done and the outcome.",
  "Use the language of the call.",
].join(" ");

const textOrNull = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : null);

/** Never throws: any failure (network, status, time-out, malformed reply) gives both fields null. */
export async function summarizeCall({
  transcript,
  config,
  timeoutMs = 20_000,
}: {
  transcript: TranscriptLine[];
  config: Config;
  timeoutMs?: number;
}): Promise<CallSummary> {
  if (transcript.length === 0) return noSummary;
  const started = performance.now();
  try {
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
        messages: [
          { role: "system", content: systemPrompt },
          { role: "user", content: transcript.map((line) => `${line.role}: ${line.text}`).join("\n") },
        ],
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new Error(`status ${response.status}`);
    const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
    const parsed = JSON.parse(body.choices?.[0]?.message?.content ?? "");
    return { shortSummary: textOrNull(parsed?.shortSummary), summary: textOrNull(parsed?.summary) };
  } catch (error) {
    log.warn("call summary failed", {
      error: (error as Error).message,
      durationMs: Math.round(performance.now() - started),
    });
    return noSummary;
  }
}
