// Streams one scripted reply of the fake Realtime provider as the events a real response produces:
// response.created, output items (an audio message and/or function calls), deltas, response.done.
import { muLawEncode } from "../../src/audio/g711";
import { pcmToBase64 } from "../../src/audio/pcm";

export type FakeToolCall = { name: string; arguments: Record<string, unknown> };
/** What the fake "model" answers: speech (text, with audio at 24 kHz or a generated tone) and/or tool calls. */
export type FakeReply = { text?: string; audio?: Int16Array; toolCalls?: FakeToolCall[] };
export type EventNaming = "beta" | "ga";

export type ResponseStream = {
  id: string;
  cancelled: boolean;
  /** The function calls this response made, by call id. */
  calls: Map<string, string>;
};

type Emit = (event: Record<string, unknown>) => void;
/** `format` is the session's output_audio_format: pcm16 (24 kHz) or g711_ulaw (8 kHz). */
type Pacing = { realtime: boolean; chunkMs: number; format: string; delayMs?: number };

/** 24 kHz audio in the output format, base64 (a tone or speech-band audio survives plain decimation well enough). */
function encodeOutput(audio: Int16Array, format: string): string {
  if (format !== "g711_ulaw") return pcmToBase64(audio);
  const narrow = Int16Array.from({ length: Math.floor(audio.length / 3) }, (_, i) => audio[i * 3] ?? 0);
  return Buffer.from(muLawEncode(narrow)).toString("base64");
}

const rate = 24_000;
let counter = 0;
export const newId = (prefix: string) => `${prefix}_${(++counter).toString(36).padStart(6, "0")}`;

const toneCache = new Map<number, Int16Array>();

/** Stand-in speech: a soft 300 Hz tone, 12 ms per character (cached: cheap for many sessions). */
export function toneFor(text: string): Int16Array {
  const length = Math.max(rate / 5, Math.round((text.length * 12 * rate) / 1000));
  let tone = toneCache.get(length);
  if (!tone) {
    tone = Int16Array.from({ length }, (_, i) => Math.round(4000 * Math.sin((2 * Math.PI * 300 * i) / rate)));
    toneCache.set(length, tone);
  }
  return tone;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function streamSpeech(
  emit: Emit,
  stream: ResponseStream,
  reply: FakeReply,
  index: number,
  naming: EventNaming,
  pacing: Pacing,
) {
  const text = reply.text ?? "";
  const audio = reply.audio ?? toneFor(text);
  const itemId = newId("item");
  const names =
    naming === "ga"
      ? { audio: "response.output_audio", transcript: "response.output_audio_transcript" }
      : { audio: "response.audio", transcript: "response.audio_transcript" };
  const ids = { response_id: stream.id, item_id: itemId, output_index: index, content_index: 0 };
  const item = {
    id: itemId,
    object: "realtime.item",
    type: "message",
    role: "assistant",
    status: "in_progress",
    content: [],
  };
  emit({ type: "response.output_item.added", response_id: stream.id, output_index: index, item });
  emit({ type: "conversation.item.created", previous_item_id: null, item });
  emit({ type: "response.content_part.added", ...ids, part: { type: "audio", transcript: "" } });
  const words = text.split(/(?<=\s)/);
  const chunk = Math.round((pacing.chunkMs * rate) / 1000);
  const chunks = Math.max(1, Math.ceil(audio.length / chunk));
  for (let c = 0; c < chunks && !stream.cancelled; c++) {
    // transcript words spread over the audio chunks, as the provider interleaves them
    const wordsNow = words.slice(
      Math.floor((c * words.length) / chunks),
      Math.floor(((c + 1) * words.length) / chunks),
    );
    if (wordsNow.length) emit({ type: `${names.transcript}.delta`, ...ids, delta: wordsNow.join("") });
    emit({
      type: `${names.audio}.delta`,
      ...ids,
      delta: encodeOutput(audio.subarray(c * chunk, (c + 1) * chunk), pacing.format),
    });
    if (pacing.realtime) await sleep(pacing.chunkMs);
  }
  if (stream.cancelled) return { ...item, status: "incomplete" };
  emit({ type: `${names.audio}.done`, ...ids });
  emit({ type: `${names.transcript}.done`, ...ids, transcript: text });
  emit({ type: "response.content_part.done", ...ids, part: { type: "audio", transcript: text } });
  const done = { ...item, status: "completed", content: [{ type: "audio", transcript: text }] };
  emit({ type: "response.output_item.done", response_id: stream.id, output_index: index, item: done });
  return done;
}

function streamCall(emit: Emit, stream: ResponseStream, call: FakeToolCall, index: number) {
  const callId = newId("call");
  const args = JSON.stringify(call.arguments);
  const item = {
    id: newId("item"),
    object: "realtime.item",
    type: "function_call",
    status: "in_progress",
    call_id: callId,
    name: call.name,
    arguments: "",
  };
  const ids = { response_id: stream.id, item_id: item.id, output_index: index, call_id: callId };
  emit({ type: "response.output_item.added", response_id: stream.id, output_index: index, item });
  emit({ type: "conversation.item.created", previous_item_id: null, item });
  emit({ type: "response.function_call_arguments.delta", ...ids, delta: args });
  emit({ type: "response.function_call_arguments.done", ...ids, name: call.name, arguments: args });
  const done = { ...item, status: "completed", arguments: args };
  emit({ type: "response.output_item.done", response_id: stream.id, output_index: index, item: done });
  stream.calls.set(callId, call.name);
  return done;
}

/** Plays the whole response; a cancel (barge-in, response.cancel) stops it with status "cancelled". */
export async function streamResponse(
  emit: Emit,
  stream: ResponseStream,
  reply: FakeReply,
  naming: EventNaming,
  pacing: Pacing,
) {
  const response = {
    id: stream.id,
    object: "realtime.response",
    status: "in_progress",
    status_details: null,
    output: [] as unknown[],
    usage: null,
  };
  emit({ type: "response.created", response });
  if (pacing.delayMs) await sleep(pacing.delayMs);
  if (reply.text !== undefined || reply.audio)
    response.output.push(await streamSpeech(emit, stream, reply, 0, naming, pacing));
  for (const call of reply.toolCalls ?? []) {
    if (stream.cancelled) break;
    response.output.push(streamCall(emit, stream, call, response.output.length));
  }
  const status = stream.cancelled ? "cancelled" : "completed";
  emit({
    type: "response.done",
    response: {
      ...response,
      status,
      status_details: stream.cancelled ? { type: "cancelled", reason: "turn_detected" } : null,
    },
  });
}
