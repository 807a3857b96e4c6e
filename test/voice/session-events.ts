// Collects what a VoiceSession emits, and waits for a particular event, for the voice tests.
import type { TranscriptEvent, ToolCallEvent, VoiceSession, VoiceSessionEvents } from "../../src/voice/engine";

export function recordEvents(session: VoiceSession) {
  const events = {
    audio: [] as Int16Array[],
    transcripts: [] as TranscriptEvent[],
    toolCalls: [] as ToolCallEvent[],
    endCalls: [] as VoiceSessionEvents["endCall"][0][],
    errors: [] as Error[],
    closed: [] as string[],
    interrupts: 0,
    turns: 0,
    audioSamples: () => events.audio.reduce((n, a) => n + a.length, 0),
    finals: (role: "USER" | "ASSISTANT") =>
      events.transcripts.filter((t) => t.final && t.role === role).map((t) => t.text),
  };
  session.on("audio", (a) => events.audio.push(a));
  session.on("transcript", (t) => events.transcripts.push(t));
  session.on("toolCall", (c) => events.toolCalls.push(c));
  session.on("endCall", (e) => events.endCalls.push(e));
  session.on("error", (e) => events.errors.push(e));
  session.on("closed", ({ reason }) => events.closed.push(reason));
  session.on("interrupt", () => events.interrupts++);
  session.on("turnDone", () => events.turns++);
  return events;
}

/** Resolves with the first `name` event (matching `accept`) emitted from now on. */
export function nextEvent<K extends keyof VoiceSessionEvents>(
  session: VoiceSession,
  name: K,
  accept: (...args: VoiceSessionEvents[K]) => boolean = () => true,
  timeoutMs = 5000,
): Promise<VoiceSessionEvents[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      session.off(name, listener as never);
      reject(new Error(`no ${name} event within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (...args: VoiceSessionEvents[K]) => {
      if (!accept(...args)) return;
      clearTimeout(timer);
      session.off(name, listener as never);
      resolve(args);
    };
    session.on(name, listener as never);
  });
}
