// Maps an openai_realtime strategy's parameters onto the Realtime `session.update` payload.
import type { VoiceTool } from "./engine";
import { endCallTool } from "./tools";

export const providerSampleRate = 24_000; // pcm16 in the Realtime API is 24 kHz mono
const defaultModel = "gpt-realtime";
const defaultTranscriptionModel = "whisper-1";

// Voices the Realtime API accepts; anything else (an ElevenLabs id, say) would make it refuse the
// whole session.update, so only these are passed on.
const providerVoices = new Set(["alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"]);

type Parameters = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const obj = (v: unknown): Parameters => (typeof v === "object" && v !== null ? (v as Parameters) : {});
const clamp = (v: number, min: number, max: number) => Math.min(max, Math.max(min, v));

/** Durations may be given in seconds (small numbers) or milliseconds. */
const toMs = (v: number | undefined) => (v === undefined ? undefined : Math.round(v < 10 ? v * 1000 : v));

function turnDetection(vad: Parameters) {
  const threshold = num(vad.confidenceThreshold);
  const prefix = toMs(num(vad.backbufferDuration));
  const silence = toMs(num(vad.stopDuration));
  return {
    type: "server_vad",
    ...(threshold !== undefined && { threshold: clamp(threshold, 0, 1) }),
    ...(prefix !== undefined && { prefix_padding_ms: prefix }),
    ...(silence !== undefined && { silence_duration_ms: silence }),
    create_response: true,
    interrupt_response: true,
  };
}

function voiceSettings(voice: Parameters) {
  const id = str(voice.voiceId)?.toLowerCase();
  const provider = str(voice.provider)?.toLowerCase();
  const speed = num(voice.speed);
  return {
    ...(id && (providerVoices.has(id) || provider === "openai") && { voice: id }),
    ...(speed !== undefined && { speed: clamp(speed, 0.25, 1.5) }),
  };
}

const sessionTools = (tools: VoiceTool[]) =>
  [...tools, endCallTool].map((t) => ({ type: "function", name: t.name, description: t.description ?? "", parameters: t.parameters }));

export function buildSessionConfig(parameters: Parameters, options: { instructions: string; tools: VoiceTool[] }) {
  const temperature = num(parameters.temperature);
  return {
    modalities: ["text", "audio"],
    instructions: options.instructions,
    ...voiceSettings(obj(parameters.voice)),
    input_audio_format: "pcm16",
    output_audio_format: "pcm16",
    input_audio_transcription: { model: str(parameters.transcriptionModel) ?? defaultTranscriptionModel },
    turn_detection: turnDetection(obj(parameters.vad)),
    tools: sessionTools(options.tools),
    tool_choice: "auto",
    // the Realtime API refuses temperatures outside [0.6, 1.2] (and with them the whole update)
    ...(temperature !== undefined && { temperature: clamp(temperature, 0.6, 1.2) }),
  };
}

/** The response.create that makes the agent open the call with the greeting, word for word. */
export const greetingResponse = (greeting: string) => ({
  type: "response.create",
  response: { instructions: `Greet the caller by saying exactly the following, word for word, and nothing else: ${greeting}` },
});

/** The provider's output rate: outputSampleRate when the strategy sets it, else the protocol's 24 kHz. */
export function outputRateOf(parameters: Parameters): number {
  const rate = num(parameters.outputSampleRate);
  return rate !== undefined && Number.isInteger(rate) && rate > 0 ? rate : providerSampleRate;
}

export function realtimeUrl(parameters: Parameters, fallbackUrl: string): string {
  const url = new URL(str(parameters.url) ?? fallbackUrl);
  const model = str(parameters.model);
  if (model || !url.searchParams.has("model")) url.searchParams.set("model", model ?? defaultModel);
  return url.toString();
}
