// Voice engine adapter for the OpenAI Realtime protocol (and compatible providers) over websocket.
import { EventEmitter } from "node:events";
import { ByteChunker } from "../audio/byte-chunker";
import { muLawDecode, muLawEncode } from "../audio/g711";
import { base64ToPcm, pcmToBytes } from "../audio/pcm";
import { createResampler, type Resampler } from "../audio/resampler";
import { log } from "../log";
import type { VoiceSession, VoiceSessionEvents, VoiceSessionOptions } from "./engine";
import { VoiceConnectError, waitingGreetingOf } from "./engine";
import {
  audioFormats,
  buildSessionConfig,
  contextItem,
  formatRate,
  greetingResponse,
  type RealtimeAudioFormat,
  realtimeUrl,
} from "./openai-session-config";
import { RealtimePlayback } from "./realtime-playback";
import { RealtimeToolCalls } from "./realtime-tool-calls";
import { InputTimeline } from "./input-timeline";
import { StageTimer } from "./stage-timer";
import { connectTimeoutMs, providerSocket, socketError, textOf, isOpen } from "./provider-socket";
import { endCallToolName, parseToolArguments } from "./tools";
import { CutIn, cutsOffAtOnce, withoutWords } from "./turn-taking/interruption";
import { turnTakingWithoutExtension, type InterruptionSettings } from "./turn-taking/turn-taking";

// biome-ignore lint/suspicious/noExplicitAny: provider events are read field by field, as the protocol documents them
type ServerEvent = { type: string; [key: string]: any };

const base64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");

class OpenAiRealtimeSession extends EventEmitter<VoiceSessionEvents> implements VoiceSession {
  private readonly toInput: Resampler;
  private readonly fromOutput: Resampler;
  // one append per chunk, not per 20 ms frame: fewer frames, base64 strings and JSON events (an 8 kHz
  // call costs about a fifth less CPU, docs/voice.md)
  private readonly input: ByteChunker;
  private readonly toolCalls = new RealtimeToolCalls();
  private readonly playback = new RealtimePlayback();
  // text so far of each utterance, by item id, for non-final transcript events
  private readonly partials = new Map<string, string>();
  private closedReason: string | null = null;
  // when each stretch of caller audio arrived: speech_stopped names the end of speech by its place in the stream
  private readonly arrivals = new InputTimeline();
  /** the latest answer requested (by the server's VAD or our response.create), until its first token or audio */
  private llm: StageTimer | null = null;
  /** a response is being generated (from response.created to response.done) */
  private responding = false;
  /** the caller's speech over the agent's audio, until minDurationMs of it cuts the agent off */
  private cutIn: { policy: CutIn; timer: ReturnType<typeof setTimeout> } | null = null;

  constructor(
    private readonly ws: WebSocket,
    readonly sampleRate: number,
    private readonly formats: { input: RealtimeAudioFormat; output: RealtimeAudioFormat },
    inputChunkMs: number,
    /** the greeting that answers the callee's first turn, and the turn detection that answers the rest */
    private waiting: { greeting: string; turnDetection: object } | null,
    /** turn_taking's interruption, as sound alone decides it (this engine hears no words) */
    private readonly interruption: InterruptionSettings,
  ) {
    super();
    const bytesPerSample = formats.input === "g711_ulaw" ? 1 : 2;
    this.input = new ByteChunker((formatRate(formats.input) / 1000) * bytesPerSample * inputChunkMs);
    this.toInput = createResampler(sampleRate, formatRate(formats.input));
    this.fromOutput = createResampler(formatRate(formats.output), sampleRate);
    ws.addEventListener("message", (event) => this.onMessage(textOf(event)));
    ws.addEventListener("error", (event) => this.fail(new Error(socketError(event))));
    ws.addEventListener("close", (event) =>
      this.finish(this.closedReason ?? `provider disconnected (code ${event.code})`),
    );
  }

  sendAudio(samples: Int16Array, ulaw: Uint8Array | null = null) {
    if (this.closedReason) return;
    this.playback.start(); // the first caller audio starts the call, and with it the playout
    this.arrivals.add((samples.length * 1000) / this.sampleRate);
    const bytes =
      this.formats.input === "g711_ulaw"
        ? (ulaw ?? muLawEncode(this.toInput.process(samples)))
        : pcmToBytes(this.toInput.process(samples));
    this.input.push(bytes, this.append);
  }

  private readonly append = (chunk: Uint8Array) =>
    this.send({ type: "input_audio_buffer.append", audio: base64(chunk) });

  sendText(text: string) {
    this.send({ type: "conversation.item.create", item: contextItem({ type: "text", role: "USER", text }) });
    this.respond();
  }

  submitToolResult(callId: string, output: string) {
    if (!this.toolCalls.isPending(callId)) {
      log.warn("tool result for an unknown call ignored", { toolCallId: callId });
      return;
    }
    this.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: callId, output } });
    if (this.toolCalls.resolve(callId)) this.send({ type: "response.create" });
  }

  greet(greeting: string) {
    this.send(greetingResponse(greeting));
  }

  respond() {
    this.answerRequested(performance.now());
    this.send({ type: "response.create" });
  }

  greetIfWaiting() {
    const waiting = this.waiting;
    this.waiting = null;
    if (!waiting) return;
    this.greet(waiting.greeting);
    // from now on the provider answers each turn itself
    this.send({ type: "session.update", session: { turn_detection: waiting.turnDetection } });
  }

  close() {
    if (this.closedReason) return;
    this.closedReason = "closed";
    this.ws.close(1000);
  }

  send(event: object) {
    if (isOpen(this.ws)) this.ws.send(JSON.stringify(event));
  }

  private onMessage(raw: string) {
    let event: ServerEvent;
    try {
      event = JSON.parse(raw);
    } catch {
      return this.fail(new Error("provider sent a message that is not JSON"));
    }
    switch (event.type) {
      case "response.audio.delta":
      case "response.output_audio.delta":
        return this.onAudio(event.item_id, this.fromOutput.process(this.decodeOutput(event.delta)));
      case "response.audio_transcript.delta":
      case "response.output_audio_transcript.delta":
      case "response.text.delta":
      case "response.output_text.delta":
        this.llm?.end();
        return this.partial("ASSISTANT", event.item_id, event.delta);
      case "response.function_call_arguments.delta":
        return this.llm?.end();
      case "response.audio_transcript.done":
      case "response.output_audio_transcript.done":
        return this.final("ASSISTANT", event.item_id, event.transcript);
      case "response.text.done":
      case "response.output_text.done":
        return this.final("ASSISTANT", event.item_id, event.text);
      case "conversation.item.input_audio_transcription.delta":
        return this.partial("USER", event.item_id, event.delta);
      case "conversation.item.input_audio_transcription.completed":
        return this.final("USER", event.item_id, event.transcript);
      case "conversation.item.input_audio_transcription.failed":
        return this.final("USER", event.item_id, "");
      case "input_audio_buffer.speech_started":
        return this.speechStarted();
      case "input_audio_buffer.committed":
        // the callee's first turn, which the provider did not answer: the greeting answers it
        return this.greetIfWaiting();
      case "input_audio_buffer.speech_stopped":
        this.endCutIn();
        return this.onSpeechStopped(event.audio_end_ms);
      case "response.created":
        this.responding = true;
        return;
      case "response.function_call_arguments.done":
        return this.onFunctionCall(event);
      case "response.done":
        this.responding = false;
        return this.onResponseDone(event);
      case "error":
        return this.fail(new Error(`provider error: ${event.error?.message ?? "unknown"}`));
    }
  }

  private decodeOutput(base64: string): Int16Array {
    return this.formats.output === "g711_ulaw" ? muLawDecode(Buffer.from(base64, "base64")) : base64ToPcm(base64);
  }

  private onAudio(itemId: string, samples: Int16Array) {
    if (!this.playback.audio(itemId, (samples.length * 1000) / this.sampleRate)) return;
    this.llm?.end();
    this.emit("audio", samples);
  }

  /** The server's VAD ended the caller's turn; it answers it on its own (turn_detection's create_response). */
  private onSpeechStopped(audioEndMs: unknown) {
    const decidedAt = performance.now();
    const endedAt = typeof audioEndMs === "number" ? this.arrivals.timeOf(audioEndMs) : null;
    this.emit("callerTurn", { endedAt: endedAt ?? decidedAt, decidedAt, preemptive: false });
    this.answerRequested(decidedAt);
  }

  private answerRequested(at: number) {
    this.llm = new StageTimer("llm", (event) => this.emit("replyStage", event));
    this.llm.start(at);
  }

  /**
   * The caller started speaking: it cuts the agent off at once (without the extension, or while nothing
   * plays), once it has lasted minDurationMs, or never (interruption off: what plays goes on, and the
   * provider, with interrupt_response false, answers after it).
   */
  private speechStarted() {
    const { interruption } = this;
    if (cutsOffAtOnce(interruption)) return this.bargeIn(); // the provider cancelled its response itself
    if (!this.playback.audible) return interruption.enabled ? this.cutOff() : this.bargeIn();
    if (!interruption.enabled) return;
    const policy = new CutIn(interruption, { pause: () => {}, resume: () => {}, interrupt: () => this.cutOff() });
    const { minDurationMs } = interruption;
    this.cutIn = { policy, timer: setTimeout(() => policy.lasted(minDurationMs), minDurationMs) };
  }

  /** Speech shorter than minDurationMs ends here: the agent went on. */
  private endCutIn() {
    if (!this.cutIn) return;
    clearTimeout(this.cutIn.timer);
    this.cutIn.policy.finish("");
    this.cutIn = null;
  }

  /** An interruption the provider did not act on (interrupt_response false): its response stops too. */
  private cutOff() {
    if (this.responding) this.send({ type: "response.cancel" });
    this.bargeIn();
  }

  /**
   * The caller cut in: the provider learns how much of the item being played was heard, and the call
   * gets only that as the item's final text, before the interrupt that drops the rest of its audio.
   */
  private bargeIn() {
    const { cut, release } = this.playback.bargeIn((itemId) => this.partials.get(itemId) ?? "");
    if (cut) {
      this.partials.delete(cut.itemId);
      this.send({
        type: "conversation.item.truncate",
        item_id: cut.itemId,
        content_index: 0,
        audio_end_ms: cut.audioEndMs,
      });
      // nothing heard: the text so far becomes "" (the call then keeps the reply's audio, not unheard words)
      if (cut.heard !== null) this.emit("transcript", { role: "ASSISTANT", text: cut.heard, final: cut.heard !== "" });
    }
    for (const emit of release) emit();
    this.emit("interrupt");
  }

  private partial(role: "USER" | "ASSISTANT", itemId: string, delta: string) {
    if (this.playback.isCut(itemId)) return;
    const text = (this.partials.get(itemId) ?? "") + (delta ?? "");
    this.partials.set(itemId, text);
    this.emit("transcript", { role, text, final: false });
  }

  private final(role: "USER" | "ASSISTANT", itemId: string, text: string) {
    this.partials.delete(itemId);
    const final = { role, text: (text ?? "").trim(), final: true };
    // a caller turn gets its final even when blank or failed: the call pairs finals with the turns in order
    if (role === "USER") return void this.emit("transcript", final);
    // the agent's is reported once its audio has played; a barge-in reports what was heard instead
    if (final.text && !this.playback.isCut(itemId))
      this.playback.afterPlayed(() => this.emit("transcript", final), { itemId, text: final.text });
  }

  private onFunctionCall(event: ServerEvent) {
    const { call_id: callId, name, response_id: responseId } = event;
    const args = parseToolArguments(event.arguments, name);
    if (name === endCallToolName) {
      // answered at once and without a follow-up response: the agent has nothing more to say
      this.toolCalls.add(responseId, callId, false);
      this.submitToolResult(callId, "The call is ending.");
      this.emit("endCall", { reason: typeof args.reason === "string" ? args.reason : null });
      return;
    }
    this.toolCalls.add(responseId, callId);
    this.emit("toolCall", { callId, name, arguments: args });
  }

  private onResponseDone(event: ServerEvent) {
    const response = event.response ?? {};
    if (response.status === "failed") {
      this.fail(new Error(`provider response failed: ${JSON.stringify(response.status_details ?? null)}`));
    }
    if (this.toolCalls.responseDone(response.id)) this.send({ type: "response.create" });
    const cancelled = response.status === "cancelled";
    this.playback.afterPlayed((cut) => this.emit("turnDone", { interrupted: cut || cancelled }));
  }

  private fail(error: Error) {
    // node's EventEmitter throws on an unheard "error"; one call's trouble must not crash the bridge
    if (this.listenerCount("error") > 0) this.emit("error", error);
    else log.warn("voice session error", { error: error.message });
  }

  private finish(reason: string) {
    this.playback.stop();
    if (this.cutIn) clearTimeout(this.cutIn.timer);
    if (this.closedReason === null) {
      this.closedReason = reason;
      this.fail(new Error(reason));
    }
    this.emit("closed", { reason });
  }
}

/** Opens a Realtime session and resolves once the provider has accepted its configuration. */
export function connectOpenAiRealtime(
  parameters: Record<string, unknown>,
  options: VoiceSessionOptions,
): Promise<VoiceSession> {
  const url = realtimeUrl(parameters, options.config.voice.realtimeUrl);
  const apiKey = options.config.voice.openaiApiKey;
  const ws = providerSocket(url, {
    ...(apiKey && { Authorization: `Bearer ${apiKey}` }),
    "OpenAI-Beta": "realtime=v1",
  });
  const waitingGreeting = waitingGreetingOf(options);
  const sessionConfig = buildSessionConfig(parameters, { ...options, waitingGreeting });
  const session = new OpenAiRealtimeSession(
    ws,
    options.sampleRate,
    audioFormats(parameters, options.sampleRate),
    options.config.voice.realtimeInputChunkMs,
    waitingGreeting
      ? { greeting: waitingGreeting, turnDetection: { ...sessionConfig.turn_detection, create_response: true } }
      : null,
    withoutWords((options.turnTaking ?? turnTakingWithoutExtension).interruption),
  );
  const { host, pathname, searchParams } = new URL(url);
  log.info("voice session connecting", { provider: host, path: pathname, model: searchParams.get("model") });

  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => abort(new VoiceConnectError("voice provider did not accept the session in time")),
      connectTimeoutMs,
    );
    const abort = (error: Error) => {
      cleanup();
      session.close();
      reject(error instanceof VoiceConnectError ? error : new VoiceConnectError(`voice provider: ${error.message}`));
    };
    const onMessage = (message: MessageEvent) => {
      let event: ServerEvent;
      try {
        event = JSON.parse(textOf(message));
      } catch {
        return abort(new Error("sent a message that is not JSON"));
      }
      if (event.type === "session.updated") {
        cleanup();
        for (const item of options.context ?? [])
          session.send({ type: "conversation.item.create", item: contextItem(item) });
        if (options.greeting && !waitingGreeting) session.greet(options.greeting);
        resolve(session);
      } else if (event.type === "error") {
        abort(new Error(event.error?.message ?? "refused the session"));
      }
    };
    const onClose = () => abort(new Error("connection closed before the session was ready"));
    const onError = (event: Event) => abort(new Error(socketError(event)));
    function cleanup() {
      clearTimeout(timer);
      ws.removeEventListener("message", onMessage);
      ws.removeEventListener("close", onClose);
      ws.removeEventListener("error", onError);
    }
    ws.addEventListener("message", onMessage);
    ws.addEventListener("close", onClose);
    ws.addEventListener("error", onError);
    ws.addEventListener("open", () => session.send({ type: "session.update", session: sessionConfig }), { once: true });
  });
}
