// Starts a pipeline session: the VAD model, the STT stream and a first TTS stream must all be ready
// before the call is answered, so a refusing provider fails the call at once with its reason.
import { log } from "../../log";
import type { VoiceSession, VoiceSessionOptions } from "../engine";
import { VoiceConnectError } from "../engine";
import { turnTakingWithoutExtension, type TurnTaking } from "../turn-taking/turn-taking";
import { FluxStt } from "./deepgram-flux";
import { DeepgramStt, type SttOptions } from "./deepgram-stt";
import { TtsStream, type TtsOptions } from "./elevenlabs-tts";
import { PipelineSession, ttsOptions, type TtsSource } from "./pipeline-session";
import { pipelineSettings } from "./pipeline-settings";
import { SpeechDetector, vadRateFor } from "./speech-detector";
import { noStt, silentTts } from "./text-only";

/**
 * Keeps one TTS stream open ahead of need; an idle one the provider closed is replaced on demand. The
 * next spare opens once the stream taken has its text (a task later): opening a socket is a few ms of
 * this event loop, which on the reply's path came between the LLM's first sentence and TTS.
 */
function ttsSpare(options: TtsOptions, first: TtsStream): TtsSource {
  let spare: Promise<TtsStream> | null = Promise.resolve(first);
  let closed = false;
  const open = () => {
    const next = TtsStream.open(options);
    next.catch(() => {}); // reported to whoever takes it
    return next;
  };
  const openSpare = () => {
    if (!closed) spare ??= open();
  };
  return {
    async take() {
      const stream = await (spare ?? open()).catch(() => open());
      spare = null;
      setTimeout(openSpare, 0);
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

/**
 * Endpointing `model` (a Flux stt.model, or it would have fallen back to silence) speaks Flux and lets
 * it end the turns; every other mode streams the caller's speech to /v1/listen and finalizes at the VAD's stop.
 */
function connectStt(options: SttOptions, { endpointing, preemptiveGeneration }: TurnTaking) {
  if (endpointing.mode !== "model") return DeepgramStt.connect(options);
  return FluxStt.connect({
    ...options,
    eotThreshold: endpointing.eotThreshold,
    eotTimeoutMs: endpointing.eotTimeoutMs,
    // Flux sends EagerEndOfTurn only when asked for it: the preemptive LLM request starts there
    eagerEotThreshold: preemptiveGeneration ? 0.5 : null,
  });
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
    session.open();
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
  const turnTaking = options.turnTaking ?? turnTakingWithoutExtension;
  const stt = connectStt(
    {
      url: config.voice.deepgramUrl,
      apiKey: config.voice.deepgramApiKey,
      sampleRate: vadRateFor(sampleRate),
      ...settings.stt,
    },
    turnTaking,
  );
  const [sttResult, ttsResult] = await Promise.allSettled([stt, TtsStream.open(tts)]);
  if (sttResult.status === "rejected" || ttsResult.status === "rejected") {
    if (sttResult.status === "fulfilled") sttResult.value.close();
    if (ttsResult.status === "fulfilled") ttsResult.value.cancel();
    const reason = sttResult.status === "rejected" ? sttResult.reason : (ttsResult as PromiseRejectedResult).reason;
    throw new VoiceConnectError((reason as Error).message);
  }
  const session = new PipelineSession(settings, options, sttResult.value, ttsSpare(tts, ttsResult.value));
  const flux = sttResult.value instanceof FluxStt;
  try {
    session.listen(
      await SpeechDetector.create(
        sampleRate,
        settings.vad,
        session.onSpeech,
        (error) => session.emit("error", error as Error),
        flux ? session.hear : null,
      ),
    );
  } catch (error) {
    session.close();
    throw new VoiceConnectError(`voice activity detector: ${(error as Error).message}`);
  }
  session.open();
  return session;
}
