// The simulated caller: one chat-completions request per turn (SIMULATOR_MODEL) whose system message
// holds the persona, the goal and the facts, offered one tool, end_call, to hang up when the goal is
// met or lost. Each request carries the conversation so far, both sides, in order.
import type { Config } from "../config";
import { chatCompletion } from "./chat-completion";
import type { Utterance } from "./observed-call";

export type Persona = { persona: string; goal: string; facts?: Record<string, string> };
export type CallerMove = { say: string } | { endCall: true };

const endCallTool = {
  type: "function",
  function: {
    name: "end_call",
    description: "Hang up: your goal is met, or it cannot be met in this call.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
  },
};

export function simulatorSystemPrompt({ persona, goal, facts }: Persona): string {
  const known = Object.entries(facts ?? {}).map(([k, v]) => `- ${k}: ${v}`);
  return [
    "You are a caller on a phone call with a voice assistant. Stay in character; say only what the caller says, one short turn at a time.",
    `Who you are and how you talk: ${persona}`,
    `Your goal: ${goal}`,
    ...(known.length ? ["Facts you know and give when asked:", ...known] : []),
    "When your goal is met, or clearly cannot be met, call end_call.",
  ].join("\n");
}

/** The caller's next move given the conversation so far (the agent's side as the caller heard it). */
export async function nextCallerMove(
  config: Pick<Config, "voice" | "testing">,
  persona: Persona,
  conversation: Utterance[],
): Promise<CallerMove> {
  // from the simulator's side the caller is the assistant and the agent the user
  const messages = conversation.map((u) =>
    u.by === "caller" ? { role: "assistant", content: u.text } : { role: "user", content: u.heard ?? u.text },
  );
  const choice = await chatCompletion(config, {
    model: config.testing.simulatorModel,
    temperature: 0.7,
    tools: [endCallTool],
    messages: [{ role: "system", content: simulatorSystemPrompt(persona) }, ...messages],
  });
  if (choice.toolCalls.some((c) => c.name === "end_call")) return { endCall: true };
  const say = choice.content?.trim();
  return say ? { say } : { endCall: true };
}
