// The audio modality's caller (design.md, "How a test call runs"): its words are spoken with the
// environment's TTS provider (ELEVENLABS_URL) and streamed to the bridge in real time, 20 ms frames
// with silence between turns like a phone line; what the agent says is transcribed with the
// environment's STT provider (DEEPGRAM_URL). The operator's providers and keys only.
import { concatPcm, hasSpeech } from "../audio/pcm";
import type { Config } from "../config";
import { DeepgramStt } from "../voice/pipeline/deepgram-stt";
import { TtsStream } from "../voice/pipeline/elevenlabs-tts";
import { defaultSttModel, defaultTtsModel, defaultVoiceId } from "../voice/pipeline/pipeline-settings";

export const CALLER_RATE = 16_000;
const FRAME_MS = 20;
const FRAME_SAMPLES = (CALLER_RATE * FRAME_MS) / 1000;
const TTS_TIMEOUT_MS = 30_000;

export type VoiceConfig = Pick<Config, "voice">;

/** The caller's words as PCM16 at CALLER_RATE, whole (a turn is spoken once it is all there). */
export async function synthesize(config: VoiceConfig, text: string): Promise<Int16Array> {
  const tts = await TtsStream.open({
    url: config.voice.elevenlabsUrl,
    apiKey: config.voice.elevenlabsApiKey,
    voiceId: defaultVoiceId,
    modelId: defaultTtsModel,
    outputFormat: `pcm_${CALLER_RATE}`,
    voiceSettings: null,
    stallMs: config.voice.providerStallMs,
  });
  const chunks: Int16Array[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the caller's speech did not arrive in time")), TTS_TIMEOUT_MS);
      tts.on("audio", (samples) => chunks.push(samples));
      tts.on("done", () => {
        clearTimeout(timer);
        resolve();
      });
      tts.on("failed", (reason) => {
        clearTimeout(timer);
        reject(new Error(`the caller's text-to-speech failed: ${reason}`));
      });
      tts.text(text);
      tts.end();
    });
  } finally {
    tts.cancel();
  }
  return concatPcm(chunks);
}

/** The caller's line: one frame every 20 ms, speech when there is some, else silence. */
export class CallerLine {
  private queue: Int16Array[] = [];
  private sent = 0;
  private readonly started = performance.now();
  private readonly timer: ReturnType<typeof setInterval>;
  private drained: (() => void) | null = null;
  private readonly silence = Buffer.alloc(FRAME_SAMPLES * 2);
  /** the number (in `sent`'s count) of the utterance's last frame with speech in it */
  private lastVoiced = -1;
  /**
   * When the utterance's last frame with speech in it was due to go out in real time (null until it
   * has gone): the end of the caller's turn, which the agent may answer while the quiet after it (TTS
   * pads it) still goes out. The schedule's time, not the send's: a late timer sends what is due in one
   * burst, the quiet after the voice with it, and the agent's VAD counted that quiet at once (an answer
   * 107 ms after a send 200 ms late, in a busy CI run).
   */
  voiceEndedAt: number | null = null;

  constructor(private readonly send: (frame: Buffer) => void) {
    this.timer = setInterval(() => this.pump(), 5);
  }

  /** Resolves when the last frame of `samples` has gone out: the end of the caller's speech. */
  speak(samples: Int16Array): Promise<void> {
    this.voiceEndedAt = null;
    for (let i = 0; i < samples.length; i += FRAME_SAMPLES) {
      const frame = new Int16Array(FRAME_SAMPLES);
      frame.set(samples.subarray(i, i + FRAME_SAMPLES));
      this.queue.push(frame);
      if (hasSpeech(frame)) this.lastVoiced = this.sent + this.queue.length - 1;
    }
    return new Promise((resolve) => {
      this.drained = resolve;
    });
  }

  stop() {
    clearInterval(this.timer);
    this.drained?.();
  }

  private pump() {
    // as many frames as real time asks for: a late timer catches up instead of drifting
    while (this.sent * FRAME_MS <= performance.now() - this.started) {
      const frame = this.queue.shift();
      this.send(frame ? Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength) : this.silence);
      if (this.sent === this.lastVoiced) this.voiceEndedAt = this.started + this.sent * FRAME_MS;
      this.sent++;
      if (!frame || this.queue.length > 0) continue;
      this.drained?.();
      this.drained = null;
    }
  }
}

/** What the caller hears of the agent, one reply at a time. */
export class CallerEar {
  private constructor(private readonly stt: DeepgramStt) {}

  static async open(config: VoiceConfig): Promise<CallerEar> {
    const stt = await DeepgramStt.connect({
      url: config.voice.deepgramUrl,
      apiKey: config.voice.deepgramApiKey,
      sampleRate: CALLER_RATE,
      model: defaultSttModel,
      language: null,
    });
    return new CallerEar(stt);
  }

  hear(samples: Int16Array) {
    this.stt.send(samples);
  }

  /** The reply heard since the last one. */
  reply(): Promise<string> {
    return this.stt.finalize();
  }

  close() {
    this.stt.close();
  }
}
