// When a quiet caller is prompted, and when the call gives up on them (the turn_taking extension's
// `idle`, docs/voice.md "Turn-taking"). The call session tells an IdleWatch what happens (the agent
// speaks or has finished, the caller speaks, tools run) and is told when to prompt and when to hang
// up. Silence counts only while nobody speaks, no answer is coming and no tool (a transfer is one) runs.
import type { IdleSettings } from "./turn-taking";

export type IdleEvents = {
  /** say this template (the next of `messages`, the last repeated) */
  prompt: (template: string) => void;
  /** the caller stayed quiet after the last prompt: end the call (silence-timeout) */
  hangup: () => void;
};

export class IdleWatch {
  private promptsInARow = 0;
  /** the agent speaks, or its answer is under way */
  private agent = false;
  /** the caller speaks, or waits for the answer to what they said */
  private caller = false;
  private tools = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    private readonly settings: IdleSettings,
    private readonly on: IdleEvents,
  ) {}

  /** The agent speaks (audio, text, a tool call): whatever the caller said is being answered. */
  agentSpeaks() {
    this.agent = true;
    this.caller = false;
    this.stop();
  }

  /** The agent's reply has played: the caller's silence counts from now. */
  agentDone() {
    this.agent = false;
    this.arm();
  }

  /** The caller began a turn (speech, text, keypad): the prompts in a row start again. */
  callerSpeaks() {
    this.caller = true;
    this.promptsInARow = 0;
    this.stop();
  }

  /** The caller's turn gets no answer (`words`: something was said, which counts as speaking). */
  callerUnanswered(words: boolean) {
    this.caller = false;
    if (words) this.promptsInARow = 0;
    this.arm();
  }

  toolStarted() {
    this.tools++;
    this.stop();
  }

  /** The agent answers with the result: the silence counts again from the end of that. */
  toolFinished() {
    this.tools--;
  }

  close() {
    this.closed = true;
    this.stop();
  }

  private arm() {
    this.stop();
    if (this.closed || this.agent || this.caller || this.tools > 0) return;
    const { timeoutMs, hangupAfterMs, maxPrompts, messages } = this.settings;
    if (this.promptsInARow >= maxPrompts) {
      this.timer = setTimeout(() => this.on.hangup(), hangupAfterMs);
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      const template = messages[Math.min(this.promptsInARow, messages.length - 1)] ?? "";
      this.promptsInARow++;
      this.agent = true; // the prompt is the agent's turn: nothing counts until it has played
      this.on.prompt(template);
    }, timeoutMs);
  }

  private stop() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
