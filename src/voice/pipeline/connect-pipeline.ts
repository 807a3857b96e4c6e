// Starts a pipeline session: the VAD model, the STT stream and a first TTS stream must all be ready
// before the call is answered, so a refusing provider fails the call at once with its reason.
import { log } from "../../log";
import type { VoiceSession, VoiceSessionOptions } from "../engine";
import { VoiceConnectError } from "../engine";
import { DeepgramStt } from "./deepgram-stt";
import { TtsStream, type TtsOptions } from "./elevenlabs-tts";
import { PipelineSession, ttsOptions, type TtsSource } from "./pipeline-session";
import { pipelineSettings } from "./pipeline-settings";
import { SpeechDetector, vadRateFor } from "./speech-detector";
import { noStt, silentTts } from "./text-only";

/** Keeps one TTS stream open ahead of need; an idle one the provider closed is replaced on demand. */
function ttsSpare(options: TtsOptions, first: TtsStream): TtsSource {
  let spare: Promise<TtsStream> | null = Promise.resolve(first);
  let closed = false;
  const open = () => {
    const next = TtsStream.open(options);
    next.catch(() => {}); // reported to whoever takes it
    return next;
  };
  return {
    async take() {
      const stream = await (spare ?? open()).catch(() => open());
      spare = closed ? null : open();
      return stream.usable ? stream : open();
    },
    close() {
      closed = true;
      void spare?.then(
        (s) => s.cancel(),
        () => {},
      );
      spare = null;
    },
  };
}

export async function connectPipeline(
  parameters: Record<string, unknown>,
  options: VoiceSessionOptions,
): Promise<VoiceSession> {
  const { config, sampleRate } = options;
  const settings = pipelineSettings(parameters, config, sampleRate);
  if (options.modality === "text") {
    log.info("voice session connecting", { engine: "pipeline", modality: "text", llm: settings.llm.model });
    const session = new PipelineSession(settings, options, noStt(), silentTts);
    if (options.greeting) session.greet(options.greeting);
    return session;
  }
  const tts = ttsOptions(settings, config);
  log.info("voice session connecting", {
    engine: "pipeline",
    stt: settings.stt.model,
    llm: settings.llm.model,
    tts: settings.tts.modelId,
    outputFormat: settings.tts.outputFormat,
  });
  const stt = DeepgramStt.connect({
    url: config.voice.deepgramUrl,
    apiKey: config.voice.deepgramApiKey,
    sampleRate: vadRateFor(sampleRate),
    ...settings.stt,
  });
  const [sttResult, ttsResult] = await Promise.allSettled([stt, TtsStream.open(tts)]);
  if (sttResult.status === "rejected" || ttsResult.status === "rejected") {
    if (sttResult.status === "fulfilled") sttResult.value.close();
    if (ttsResult.status === "fulfilled") ttsResult.value.cancel();
    const reason = sttResult.status === "rejected" ? sttResult.reason : (ttsResult as PromiseRejectedResult).reason;
    throw new VoiceConnectError((reason as Error).message);
  }
  const session = new PipelineSession(settings, options, sttResult.value, ttsSpare(tts, ttsResult.value));
  try {
    session.listen(
      await SpeechDetector.create(sampleRate, settings.vad, session.onSpeech, (error) =>
        session.emit("error", error as Error),
      ),
    );
  } catch (error) {
    session.close();
    throw new VoiceConnectError(`voice activity detector: ${(error as Error).message}`);
  }
  if (options.greeting) session.greet(options.greeting);
  return session;
}
