// A handoff inside a live call (design.md, "Handoff between assistants"; docs/handoff.md): the LLM's
// handoff tool names a destination assistant. Its voice session is opened at once, with the
// conversation so far as its context, while the message is spoken by the assistant that hands over;
// from the tool call on the caller's audio is held for the destination, which then takes the call
// (same agent task, same playout) and speaks its greeting, answers the caller's last words, or waits.
import type { CallHandoff, CallMessage } from "../events/payloads";
import { describeError } from "../errors";
import { log } from "../log";
import type { ContextItem, ToolCallEvent, VoiceSession } from "../voice/engine";
import type { CallTool, HandoffTool } from "../voice/tools";
import type { TurnTaking } from "../voice/turn-taking/turn-taking";
import type { ToolCallOutcome } from "./run-tool-call";
import { renderTemplate } from "./templates";

export const maxHandoffsPerCall = 10;

/** A destination assistant whose voice session is open but not yet heard. */
export type ConnectedAssistant = {
  assistantId: string;
  voice: VoiceSession;
  tools: CallTool[];
  /** rendered with the call's variables; null: none */
  greeting: string | null;
  turnTaking: TurnTaking;
};

/** Opens a destination's voice session with `context` (its database and config are run-call.ts's); rejects with why not. */
export type ConnectAssistant = (assistantId: string, context: ContextItem[]) => Promise<ConnectedAssistant>;

/** How the destination begins: its greeting, an answer to the caller's last words, or the caller's turn. */
export type Opening = { greet: string } | "respond" | "wait";

/** What the call session does for a handoff; the order of the steps is this module's. */
export type HandoffSteps = {
  /** the conversation so far, in order */
  messages(): readonly CallMessage[];
  /** speaks the message; settles once it has played */
  speak(text: string): Promise<void>;
  /** from now the caller's audio is kept for the destination, not heard by the assistant handing over */
  holdCaller(): void;
  /** the handoff failed: what was held goes to the assistant that stays */
  releaseCaller(): void;
  /** the destination takes the call: its voice gets what was held, then it begins with `opening` */
  switchTo(destination: ConnectedAssistant, opening: Opening): void;
};

/** The call's handoffs: at most one at a time and `maxHandoffsPerCall` in all. */
export class Handoffs {
  readonly records: CallHandoff[] = [];
  private running = false;

  /** `current`: the assistant speaking (null: an agent, which is no assistant) */
  constructor(
    private readonly callId: string,
    private current: string | null,
    private readonly connect: ConnectAssistant,
    private readonly variables: Readonly<Record<string, string>>,
  ) {}

  /** Answers the handoff tool call: the LLM learns why when the caller stays with it. */
  async run(event: ToolCallEvent, tool: HandoffTool, steps: HandoffSteps): Promise<ToolCallOutcome> {
    const started = performance.now();
    const answer = (output: string) => ({ output, durationMs: Math.round(performance.now() - started) });
    const { destinations, context, maxMessages } = tool.handoff;
    const destination = destinations.find((d) => d.name === event.arguments.destination);
    if (!destination)
      return answer(
        `There is no destination ${JSON.stringify(event.arguments.destination)}: use one of ${destinations.map((d) => d.name).join(", ")}.`,
      );
    if (this.records.length >= maxHandoffsPerCall)
      return answer(`No more handoffs: a call makes at most ${maxHandoffsPerCall}. Go on helping the caller yourself.`);
    if (this.running) return answer("Another handoff is under way.");
    this.running = true;
    const fields = { callId: this.callId, tool: event.name, toolCallId: event.callId, to: destination.assistantId };
    const items = contextOf(steps.messages(), context, maxMessages);
    const connecting = this.connect(destination.assistantId, items);
    connecting.catch(() => {}); // read below, after the message
    steps.holdCaller();
    try {
      if (destination.message) await steps.speak(renderTemplate(destination.message, this.variables));
      // the LLM reads why: the message, not the error's class
      const connected = await connecting.catch((error: unknown) =>
        error instanceof Error ? error.message : describeError(error),
      );
      if (typeof connected === "string") {
        log.warn("call", { ...fields, event: "handoff_failed", error: connected });
        steps.releaseCaller();
        return answer(`The handoff to ${destination.name} failed: ${connected}. Go on helping the caller yourself.`);
      }
      this.records.push({
        at: Date.now(),
        fromAssistantId: this.current,
        toAssistantId: destination.assistantId,
        destination: destination.name,
      });
      this.current = destination.assistantId;
      steps.switchTo(connected, openingOf(connected.greeting, items));
      log.info("call", { ...fields, event: "handed_off", durationMs: Math.round(performance.now() - started) });
      return answer(`The caller was handed to ${destination.name}.`);
    } finally {
      this.running = false;
    }
  }
}

/** A greeting is spoken; without one the destination answers the conversation it was given, or waits for the caller. */
const openingOf = (greeting: string | null, context: ContextItem[]): Opening =>
  greeting ? { greet: greeting } : context.length > 0 ? "respond" : "wait";

/**
 * What the destination is told of the conversation (`all`, the last `maxMessages`, or `none`): the
 * words said, and each tool call that has its result, with the result right after it. A call still
 * without one (the handoff's own) is left out, and so is what nobody transcribed.
 */
export function contextOf(
  messages: readonly CallMessage[],
  context: HandoffTool["handoff"]["context"],
  maxMessages: number,
): ContextItem[] {
  if (context === "none") return [];
  const results = new Map<string, string>();
  for (const m of messages) if (m.type === "tool_result") results.set(m.callId, m.text);
  const items: ContextItem[] = [];
  for (const m of messages) {
    if (m.type === "text" && (m.role === "USER" || m.role === "ASSISTANT"))
      items.push({ type: "text", role: m.role, text: m.text });
    else if (m.type === "tool_call" && results.has(m.callId)) {
      items.push({ type: "tool_call", callId: m.callId, name: m.toolName, arguments: m.parameters });
      items.push({ type: "tool_result", callId: m.callId, output: results.get(m.callId) ?? "" });
    }
  }
  if (context === "all") return items;
  const last = items.slice(-maxMessages);
  // cut between a call and its result: the result alone would answer nothing
  return last[0]?.type === "tool_result" ? last.slice(1) : last;
}

/** The caller's audio while a handoff is under way, kept for the destination (copies: the transport reuses its buffers). */
export class CallerAudioHold {
  private readonly frames: Int16Array[] = [];

  push(samples: Int16Array) {
    this.frames.push(samples.slice());
  }

  /** Every frame held, in order, once. */
  drain(): Int16Array[] {
    return this.frames.splice(0);
  }
}
