// The judge: one chat-completions request per result that has judge criteria (design.md, "How a test
// call runs"). It sees the transcript (heard and intended), every tool call with its result, and the
// end reason; its answer must name each criterion with pass or fail, else it is asked once more.
import type { Config } from "../config";
import { chatCompletion, ChatProviderError } from "./chat-completion";
import type { JudgeVerdicts } from "./criteria";
import { transcriptLines, type ObservedCall } from "./observed-call";

export type JudgeQuestion = { name: string; question: string };

const answerSchema = {
  type: "object",
  additionalProperties: false,
  required: ["criteria"],
  properties: {
    criteria: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["name", "verdict", "reason"],
        properties: { name: { type: "string" }, verdict: { enum: ["pass", "fail"] }, reason: { type: "string" } },
      },
    },
  },
};

const system = [
  "You judge a phone call between a caller and a voice assistant (the agent) against criteria.",
  "For every criterion answer pass if the answer to its question about the whole call is yes, else fail,",
  "with a one-sentence reason. Name each criterion exactly as given.",
].join(" ");

/** The call as the judge reads it. */
export function callForJudge(call: ObservedCall): string {
  const lines = transcriptLines(call.utterances);
  const tools = call.toolCalls.map(
    (t) =>
      `tool ${t.tool}(${JSON.stringify(t.arguments)}) -> ${t.output}${t.source === "unmocked" ? " [no mock matched]" : ""}`,
  );
  return [
    "Transcript:",
    ...lines,
    "",
    "Tool calls:",
    ...(tools.length ? tools : ["(none)"]),
    "",
    `The call ended: ${call.endedReason ?? "unknown"}`,
  ].join("\n");
}

/** A usable answer names every criterion once with pass or fail; anything else is null. */
export function readVerdicts(content: string | null, questions: JudgeQuestion[]): JudgeVerdicts | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content ?? "");
  } catch {
    return null;
  }
  const items = (parsed as { criteria?: unknown })?.criteria;
  if (!Array.isArray(items)) return null;
  const verdicts = new Map<string, { verdict: "pass" | "fail"; reason: string }>();
  for (const item of items as Record<string, unknown>[]) {
    const { name, verdict, reason } = item ?? {};
    if (typeof name !== "string" || (verdict !== "pass" && verdict !== "fail")) return null;
    verdicts.set(name, { verdict, reason: typeof reason === "string" ? reason : "" });
  }
  return questions.every((q) => verdicts.has(q.name)) ? verdicts : null;
}

export async function judgeCall(
  config: Pick<Config, "voice" | "testing">,
  call: ObservedCall,
  questions: JudgeQuestion[],
): Promise<JudgeVerdicts> {
  const body = {
    model: config.testing.judgeModel,
    temperature: 0,
    response_format: { type: "json_schema", json_schema: { name: "verdicts", strict: true, schema: answerSchema } },
    messages: [
      { role: "system", content: system },
      {
        role: "user",
        content: `${callForJudge(call)}\n\nCriteria:\n${questions.map((q) => `- ${q.name}: ${q.question}`).join("\n")}`,
      },
    ],
  };
  let last = "";
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      const verdicts = readVerdicts((await chatCompletion(config, body)).content, questions);
      if (verdicts) return verdicts;
      last = "the judge's answer was not usable";
    } catch (error) {
      if (!(error instanceof ChatProviderError)) throw error;
      last = error.message;
    }
  }
  return { error: `${last} (asked twice)` };
}
