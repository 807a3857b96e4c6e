// The conversation history of call_concluded: transcripts as text, an utterance nobody transcribed as
// its raw audio, tool calls and results. Timestamps are when things were said (Unix ms).
import { concatPcm, pcmToBase64 } from "../audio/pcm";
import type { CallMessage } from "../events/payloads";
import type { TranscriptLine } from "../voice/summarize";
import type { ToolCallEvent, TranscriptEvent } from "../voice/engine";

// `seq`: when it began, in the order things happened; it orders messages of the same millisecond
type Utterance = { at: number; seq: number; audio: Int16Array[]; samples: number; text: string };

export class CallMessages {
  private readonly messages: CallMessage[] = [];
  // an agent utterance is added when it ends, after a tool call that came while it played: on the
  // same millisecond, the one that began first comes first
  private readonly began = new WeakMap<CallMessage, number>();
  private seq = 0;
  // the caller spoke; its transcript comes later (the provider transcribes after the turn)
  private readonly pendingUser: Utterance[] = [];
  private agent: Utterance | null = null;

  /** `maxUtteranceSamples` caps the audio kept per utterance, for the case it has no transcript. */
  constructor(private readonly maxUtteranceSamples: number) {}

  userSpeechStarted(at: number) {
    this.pendingUser.push({ at, seq: this.seq++, audio: [], samples: 0, text: "" });
  }

  callerAudio(samples: Int16Array) {
    const open = this.pendingUser.at(-1);
    if (open) this.keep(open, samples);
  }

  /** Agent audio as it arrives; `at` is when its first sample will play. */
  agentAudio(samples: Int16Array, at: number) {
    this.agent ??= { at, seq: this.seq++, audio: [], samples: 0, text: "" };
    this.keep(this.agent, samples);
  }

  transcript(event: TranscriptEvent, at: number) {
    if (event.role === "USER") {
      if (!event.final) return;
      // every turn gets one final, blank or failed ones too, so each is paired with its own utterance
      const utterance = this.pendingUser.shift();
      if (event.text.trim())
        this.add({ type: "text", role: "USER", timestamp: utterance?.at ?? at, text: event.text }, utterance?.seq);
      else if (utterance) this.keepAsAudio("USER", utterance);
      return;
    }
    this.agent ??= { at, seq: this.seq++, audio: [], samples: 0, text: "" };
    const agent = this.agent;
    agent.text = event.text;
    if (event.final) this.closeAgent();
  }

  /** The agent's response ended or was cut off: what it said so far is its utterance. */
  agentDone() {
    this.closeAgent();
  }

  /** Something the caller said other than by voice (keypad digits), as it reached the LLM. */
  userText(text: string, at: number) {
    this.add({ type: "text", role: "USER", timestamp: at, text });
  }

  toolCall(event: ToolCallEvent, at: number) {
    this.add({
      type: "tool_call",
      role: "TOOL_CALL",
      timestamp: at,
      callId: event.callId,
      toolName: event.name,
      parameters: event.arguments,
    });
  }

  toolResult(callId: string, toolName: string, text: string, at: number, durationMs: number) {
    this.add({ type: "tool_result", role: "TOOL_CALL_RESULT", timestamp: at, callId, toolName, text, durationMs });
  }

  /**
   * Closes open utterances (untranscribed ones become audio) and returns the history. Agent audio
   * queued before the call started played at its start, so nothing is dated before `startedAt`.
   */
  finish(startedAt: number | null): CallMessage[] {
    this.closeAgent();
    for (const utterance of this.pendingUser.splice(0)) this.keepAsAudio("USER", utterance);
    const when = (m: CallMessage) => (startedAt !== null && m.timestamp < startedAt ? startedAt : m.timestamp);
    const began = (m: CallMessage) => this.began.get(m) ?? 0;
    return [...this.messages]
      .sort((a, b) => when(a) - when(b) || began(a) - began(b))
      .map((m) => (when(m) === m.timestamp ? m : { ...m, timestamp: when(m) }));
  }

  /** The messages so far (the call goes on), in order. */
  soFar(): CallMessage[] {
    return [...this.messages].sort((a, b) => a.timestamp - b.timestamp);
  }

  /** The text of the call so far (it goes on), in order. */
  transcriptSoFar(): TranscriptLine[] {
    return CallMessages.transcriptOf(this.messages);
  }

  /** The text of the call for the summary, in order. */
  static transcriptOf(messages: CallMessage[]): TranscriptLine[] {
    return [...messages]
      .sort((a, b) => a.timestamp - b.timestamp)
      .flatMap((m): TranscriptLine[] => {
        if (m.type === "text") return [{ role: m.role, text: m.text }];
        if (m.type === "tool_call") return [{ role: m.role, text: `${m.toolName}(${JSON.stringify(m.parameters)})` }];
        if (m.type === "tool_result") return [{ role: m.role, text: m.text }];
        return [];
      });
  }

  private closeAgent() {
    const agent = this.agent;
    this.agent = null;
    if (!agent) return;
    if (agent.text.trim())
      this.add({ type: "text", role: "ASSISTANT", timestamp: agent.at, text: agent.text.trim() }, agent.seq);
    else this.keepAsAudio("ASSISTANT", agent);
  }

  /** An utterance nobody transcribed is kept as its audio (if any was heard). */
  private keepAsAudio(role: "USER" | "ASSISTANT", utterance: Utterance) {
    if (utterance.samples > 0)
      this.add(
        { type: "audio", role, timestamp: utterance.at, audio: pcmToBase64(concatPcm(utterance.audio)) },
        utterance.seq,
      );
  }

  private add(message: CallMessage, began = this.seq++) {
    this.messages.push(message);
    this.began.set(message, began);
  }

  private keep(utterance: Utterance, samples: Int16Array) {
    if (utterance.samples >= this.maxUtteranceSamples) return;
    utterance.audio.push(samples);
    utterance.samples += samples.length;
  }
}
