// An outbound call with `voicemail.action` hangup or leave_message: until the detector has decided,
// the agent neither hears the callee nor speaks (its greeting waits too), so a machine never records
// half an answer to its own greeting. A person: what they said so far reaches the agent and the call
// goes on as any other. A machine: the call ends as `voicemail`, at once (hangup) or after the message
// has played, once the beep or the greeting is over (leave_message).
import { log } from "../log";
import type { VoiceSession } from "../voice/engine";
import type { EndReason } from "./caller-transport";
import { VoicemailDetector, type VoicemailEvent } from "./voicemail-detector";

export type VoicemailSetting = { action: "hangup" | "leave_message" | "continue"; message?: string };

/** What the screen needs of the call's session. */
export type ScreenedSession = {
  end(reason: EndReason): void;
  sayThenEnd(text: string, reason: EndReason): void;
};

type Held = { samples: Int16Array; ulaw: Uint8Array | null };

export class VoicemailScreen {
  private readonly detector: VoicemailDetector;
  private verdict: "human" | "machine" | null = null;
  private voice: VoiceSession | null = null;
  private held: Held[] = [];
  /** the silent callee's greeting was due before the verdict */
  private greetingHeld = false;
  /** leave_message: the machine listens now, our message may be spoken */
  private messageDue = false;

  /** null for `continue` (no screening): the call runs as any other */
  static of(setting: VoicemailSetting | undefined, sampleRate: number, session: ScreenedSession, callId: string) {
    if (!setting || setting.action === "continue") return null;
    return new VoicemailScreen(
      sampleRate,
      setting.action === "leave_message" ? (setting.message ?? "") : null,
      session,
      callId,
    );
  }

  private constructor(
    sampleRate: number,
    /** rendered; null: hang up */
    private readonly message: string | null,
    private readonly session: ScreenedSession,
    private readonly callId: string,
  ) {
    this.detector = new VoicemailDetector(sampleRate);
  }

  /** Callee audio, as it arrives (PCM16 at the call's rate). */
  feed(samples: Int16Array) {
    if (this.detector.finished) return;
    for (const event of this.detector.feed(samples)) this.on(event);
  }

  /** The voice as the session should see it: deaf and silent until the callee is known to be a person. */
  gate(voice: VoiceSession): VoiceSession {
    this.voice = voice;
    const gated: Partial<VoiceSession> = {
      sendAudio: (samples, ulaw = null) => {
        if (this.verdict === "human") return voice.sendAudio(samples, ulaw);
        // the caller's buffers are reused after the call: keep copies until the verdict
        if (this.verdict === null) this.held.push({ samples: samples.slice(), ulaw: ulaw?.slice() ?? null });
      },
      greet: (text) => {
        if (this.verdict === "human" || this.messageDue) voice.greet(text);
      },
      greetIfWaiting: () => {
        if (this.verdict === "human") voice.greetIfWaiting();
        else if (this.verdict === null) this.greetingHeld = true;
      },
    };
    return new Proxy(voice, {
      get: (target, key) => {
        if (key in gated) return gated[key as keyof VoiceSession];
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  private on(event: VoicemailEvent) {
    log.info("call", {
      callId: this.callId,
      event: "voicemail_screen",
      verdict: event.type,
      atMs: event.atMs,
      ...("reason" in event && { reason: event.reason }),
    });
    if (event.type === "human") {
      this.verdict = "human";
      // what the callee said so far: its first turn gets the greeting from the voice (or silence did)
      for (const { samples, ulaw } of this.held) this.voice?.sendAudio(samples, ulaw);
      if (this.greetingHeld) this.voice?.greetIfWaiting();
    } else if (event.type === "machine") {
      this.verdict = "machine";
      if (this.message === null) this.session.end("voicemail");
    } else if (this.message) {
      this.messageDue = true;
      this.session.sayThenEnd(this.message, "voicemail");
    } else this.session.end("voicemail");
    this.held = [];
    this.greetingHeld = false;
  }
}
