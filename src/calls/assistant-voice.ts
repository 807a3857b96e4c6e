// An assistant's side of a call, for the assistant the call was routed to and for each handoff
// destination alike: the tools its extensions give the LLM, its turn-taking, and its voice session.
import type { Config } from "../config";
import { createSecretBox } from "../crypto/secrets";
import type { Db } from "../db/client";
import { HANDOFF } from "../models/handoff";
import { createVoiceSession } from "../voice/create-voice-session";
import type { ContextItem, VoiceSession } from "../voice/engine";
import {
  handoffToolsFromExtensions,
  knowledgeToolsFromExtensions,
  toolWebhooksFromExtensions,
  transferToolsFromExtensions,
  type CallTool,
} from "../voice/tools";
import { turnTakingOf, type TurnTaking } from "../voice/turn-taking/turn-taking";
import { loadAssistantNames, type CallAssistant } from "./load-assistant";
import { renderTemplate } from "./templates";

export type AssistantVoiceDeps = { db: Db; config: Config };

/** Every tool the assistant's extensions give the LLM; a handoff's destinations go by the organization's assistants' names. */
export async function assistantTools(
  { db, config }: AssistantVoiceDeps,
  assistant: CallAssistant,
): Promise<CallTool[]> {
  const { extensions } = assistant;
  const secrets = createSecretBox(config.encryptionKey);
  const handoffs = extensions.some((e) => e.type === HANDOFF)
    ? handoffToolsFromExtensions(extensions, await loadAssistantNames(db, assistant.organizationId))
    : [];
  return [
    ...toolWebhooksFromExtensions(extensions),
    ...knowledgeToolsFromExtensions(extensions, (sealed) => secrets.decrypt(sealed)),
    ...transferToolsFromExtensions(extensions),
    ...handoffs,
  ];
}

export type VoiceSetup = {
  variables: Readonly<Record<string, string>>;
  sampleRate: number;
  modality: "audio" | "text";
  /** the greeting is requested as the session opens (the call's first assistant); otherwise the caller of this says it */
  greetAtOnce: boolean;
  greetingWaitsForCallee?: boolean;
  /** a handoff's conversation so far */
  context?: ContextItem[];
};

export type AssistantVoice = {
  voice: VoiceSession;
  tools: CallTool[];
  turnTaking: TurnTaking;
  /** rendered with the call's variables; null: none */
  greeting: string | null;
};

/** Opens the assistant's voice session: its prompt and greeting rendered with the call's variables, its strategy, tools and turn-taking. */
export async function openAssistantVoice(
  deps: AssistantVoiceDeps,
  assistant: CallAssistant,
  setup: VoiceSetup,
): Promise<AssistantVoice> {
  if (!assistant.strategy) throw new Error(`the ${assistant.kind} has no LLM generation strategy`);
  const tools = await assistantTools(deps, assistant);
  const turnTaking = turnTakingOf(assistant.extensions, assistant.strategy);
  const greeting = assistant.greeting ? renderTemplate(assistant.greeting, setup.variables) : null;
  const voice = await createVoiceSession(assistant.strategy, {
    instructions: renderTemplate(assistant.systemPrompt ?? "", setup.variables),
    greeting: setup.greetAtOnce ? greeting : null,
    greetingWaitsForCallee: setup.greetingWaitsForCallee,
    tools: tools.map((t) => t.tool),
    sampleRate: setup.sampleRate,
    config: deps.config,
    modality: setup.modality,
    turnTaking,
    context: setup.context,
  });
  return { voice, tools, turnTaking, greeting };
}
