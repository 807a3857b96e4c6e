// Maps an openai_realtime strategy's parameters onto the Realtime `session.update` payload.
import { realtimeVoices } from "../models/strategies";
import type { ContextItem, VoiceTool } from "./engine";
import { endCallTool } from "./tools";
import { realtimeTurnDetection } from "./turn-taking/endpointing";
import { turnTakingWithoutExtension, type TurnTaking } from "./turn-taking/turn-taking";

export const providerSampleRate = 24_000; // pcm16 in the Realtime API is 24 kHz mono
const defaultModel = "gpt-realtime";
const defaultTranscriptionModel = "whisper-1";

const providerVoices = new Set(realtimeVoices);

type Parameters = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const obj = (v: unknown): Parameters => (typeof v === "object" && v !== null ? (v as Parameters) : {});
const clamp = (v: number, min: number, max: number) => Math.min(max, Math.max(min, v));

/** Durations are milliseconds, as in the pipeline engine. */
const toMs = (v: number | undefined) => (v === undefined ? undefined : Math.round(v));

/** server_vad's own fields, from the strategy's vad. */
function serverVad(vad: Parameters) {
  const threshold = num(vad.confidenceThreshold);
  const prefix = toMs(num(vad.backbufferDuration));
  const silence = toMs(num(vad.stopDuration));
  return {
    ...(threshold !== undefined && { threshold: clamp(threshold, 0, 1) }),
    ...(prefix !== undefined && { prefix_padding_ms: prefix }),
    ...(silence !== undefined && { silence_duration_ms: silence }),
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
  [...tools, endCallTool].map((t) => ({
    type: "function",
    name: t.name,
    description: t.description ?? "",
    parameters: t.parameters,
  }));

export type RealtimeAudioFormat = "pcm16" | "g711_ulaw";

/**
 * 8 kHz calls talk G.711 mu-law with the provider (what a phone line carries: no resampling); others
 * pcm16 at 24 kHz. outputSampleRate, when set, picks the output: 8000 is g711_ulaw, 24000 pcm16.
 */
export function audioFormats(
  parameters: Parameters,
  callRate: number,
): { input: RealtimeAudioFormat; output: RealtimeAudioFormat } {
  const input = callRate === 8000 ? "g711_ulaw" : "pcm16";
  const rate = num(parameters.outputSampleRate);
  return { input, output: rate === 8000 ? "g711_ulaw" : rate === providerSampleRate ? "pcm16" : input };
}

export const formatRate = (format: RealtimeAudioFormat) => (format === "g711_ulaw" ? 8000 : providerSampleRate);

export function buildSessionConfig(
  parameters: Parameters,
  options: {
    instructions: string;
    tools: VoiceTool[];
    sampleRate: number;
    modality?: "audio" | "text";
    turnTaking?: TurnTaking;
    /** a greeting that waits for the callee: the provider does not answer turns itself until it is spoken */
    waitingGreeting?: string | null;
  },
) {
  const text = options.modality === "text";
  const { endpointing, interruption } = options.turnTaking ?? turnTakingWithoutExtension;
  const temperature = num(parameters.temperature);
  const formats = audioFormats(parameters, options.sampleRate);
  const turnDetection = realtimeTurnDetection(endpointing, interruption, serverVad(obj(parameters.vad)));
  return {
    // a text call: text output, and turns that come as items (no audio, so nothing to detect)
    modalities: text ? ["text"] : ["text", "audio"],
    instructions: options.instructions,
    ...voiceSettings(obj(parameters.voice)),
    input_audio_format: formats.input,
    output_audio_format: formats.output,
    input_audio_transcription: { model: str(parameters.transcriptionModel) ?? defaultTranscriptionModel },
    turn_detection: text
      ? null
      : options.waitingGreeting
        ? { ...turnDetection, create_response: false }
        : turnDetection,
    tools: sessionTools(options.tools),
    tool_choice: "auto",
    // the Realtime API refuses temperatures outside [0.6, 1.2] (and with them the whole update)
    ...(temperature !== undefined && { temperature: clamp(temperature, 0.6, 1.2) }),
  };
}

/** The response.create that makes the agent open the call with the greeting, word for word. */
export const greetingResponse = (greeting: string) => ({
  type: "response.create",
  response: {
    instructions: `Greet the caller by saying exactly the following, word for word, and nothing else: ${greeting}`,
  },
});

/** The operator's endpoint (OPENAI_REALTIME_URL) with the strategy's model: a strategy never picks where the key goes. */
export function realtimeUrl(parameters: Parameters, endpoint: string): string {
  const url = new URL(endpoint);
  const model = str(parameters.model);
  if (model || !url.searchParams.has("model")) url.searchParams.set("model", model ?? defaultModel);
  return url.toString();
}

/** One item of a handoff's conversation so far (or a caller's text) as a Realtime conversation item. */
export function contextItem(item: ContextItem): object {
  if (item.type === "tool_call")
    return { type: "function_call", call_id: item.callId, name: item.name, arguments: JSON.stringify(item.arguments) };
  if (item.type === "tool_result") return { type: "function_call_output", call_id: item.callId, output: item.output };
  return item.role === "USER"
    ? { type: "message", role: "user", content: [{ type: "input_text", text: item.text }] }
    : { type: "message", role: "assistant", content: [{ type: "text", text: item.text }] };
}
