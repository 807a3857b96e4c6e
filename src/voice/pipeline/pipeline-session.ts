// The pipeline voice engine behind the VoiceSession interface: local VAD -> streaming STT -> streamed
// chat completions with tools -> streaming TTS, with barge-in. One reply at a time; each LLM round of
// a reply is one utterance (one TTS stream), finished once its audio has played.
import { EventEmitter } from "node:events";
import { createResampler, type Resampler } from "../../audio/resampler";
import type { Config } from "../../config";
import { log } from "../../log";
import { readAhead } from "../../lib/read-ahead";
import {
  type ReplyStageEvent,
  type VoiceSession,
  type VoiceSessionEvents,
  type VoiceSessionOptions,
  waitingGreetingOf,
} from "../engine";
import { endCallTool, endCallToolName, parseToolArguments } from "../tools";
import { type ChatMessage, streamChat } from "./chat-stream";
import { contextMessages } from "./context-messages";
import type { DeepgramStt } from "./deepgram-stt";
import type { SttEvents } from "./stt-socket";
import type { TtsEvents, TtsOptions, TtsStream } from "./elevenlabs-tts";
import { type Chunk, heardText, PlaybackClock } from "./playback-clock";
import type { PipelineSettings } from "./pipeline-settings";
import { SentenceSplitter } from "./sentences";
import { StageTimer } from "../stage-timer";
import type { SpeechDetector, SpeechEvent } from "./speech-detector";
import type { AssembledToolCall } from "./tool-call-assembler";
import { Endpointer } from "../turn-taking/endpointing";
import { CutIn, cutsOffAtOnce } from "../turn-taking/interruption";
import { turnTakingWithoutExtension, type TurnTaking } from "../turn-taking/turn-taking";

/** Opens TTS streams one ahead, so an utterance does not wait for a connection. */
export type TtsSource = { take(): Promise<SpeechStream>; close(): void };
/** What the session uses of a TTS stream (a text call's streams make no audio). */
export type SpeechStream = EventEmitter<TtsEvents> & Pick<TtsStream, "text" | "end" | "cancel">;
/**
 * What the session uses of the STT stream (a text call has none): `finalize` ends a turn the VAD
 * decided; a stream without it (Flux) decides the turns itself and hears all the audio.
 */
export type SttStream = EventEmitter<SttEvents> &
  Pick<DeepgramStt, "send" | "close"> &
  Partial<Pick<DeepgramStt, "finalize">>;

/**
 * A reply prepared before the turn was decided (preemptiveGeneration): its LLM request runs for `text`
 * on the history as it was (`historyLength` messages); `released` says whether it is heard at all.
 */
type Prepared = { text: string; historyLength: number; release: (heard: boolean) => void; released: Promise<boolean> };
/** `llm`, `tts`: the reply's first token and first audio (replyStage events; a prepared reply's held until heard) */
type Reply = {
  abort: AbortController;
  llmDone: boolean;
  cancelled: boolean;
  prepared: Prepared | null;
  llm: StageTimer;
  tts: StageTimer;
};
type Utterance = {
  text: string;
  chunks: Chunk[];
  stream: SpeechStream | null;
  opening: Promise<SpeechStream> | null;
  /** Settles once all of its audio has been emitted (or it will have none). */
  generated: Promise<void>;
  markGenerated: () => void;
  /** Its final transcript went out before it finished playing (it preceded tool calls). */
  reported: boolean;
  message: ChatMessage | null;
  /** Spoken but never part of the LLM's history (the tool filler: it would split a tool call from its result). */
  aside: boolean;
  finishTimer: ReturnType<typeof setTimeout> | null;
};

// a model that keeps calling tools must not hold the caller forever
const maxRoundsPerReply = 6;
const cancelledToolOutput = "Cancelled: the caller interrupted before the result arrived.";

export class PipelineSession extends EventEmitter<VoiceSessionEvents> implements VoiceSession {
  private readonly history: ChatMessage[];
  private readonly clock = new PlaybackClock();
  private readonly fromTts: Resampler;
  private utterances: Utterance[] = [];
  private reply: Reply | null = null;
  /** a reply whose turn is not decided yet: nothing of it is heard before the turn ends */
  private prepared: Reply | null = null;
  private replyAgain = false;
  private readonly pendingTools = new Map<string, (output: string) => void>();
  private userTurns: Promise<void> = Promise.resolve();
  private closedReason: string | null = null;
  /** the greeting that answers the callee's first turn, until it is spoken */
  private waitingGreeting: string | null;
  private detector!: SpeechDetector;
  private readonly endpointer: Endpointer;
  /** when the caller's last speech of the turn under way reached the bridge (the VAD's last stop) */
  private lastSpeechAt: number | null = null;
  private readonly turnTaking: TurnTaking;
  /** the caller's speech over the agent, until its turn ends */
  private cutIn: CutIn | null = null;
  /** what the caller said over the agent with interruption off: answered once the reply is done */
  private heldTurns: string[] = [];

  constructor(
    private readonly settings: PipelineSettings,
    private readonly options: VoiceSessionOptions,
    private readonly stt: SttStream,
    private readonly tts: TtsSource,
  ) {
    super();
    this.history = [{ role: "system", content: options.instructions }, ...contextMessages(options.context ?? [])];
    this.waitingGreeting = waitingGreetingOf(options);
    this.fromTts = createResampler(settings.tts.outputRate, options.sampleRate);
    this.turnTaking = options.turnTaking ?? turnTakingWithoutExtension;
    const { endpointing, preemptiveGeneration } = this.turnTaking;
    this.endpointer = new Endpointer(endpointing, preemptiveGeneration, {
      ended: (text) => this.endUserTurn(text),
      tentative: (text) => this.prepareReply(text),
      resumed: () => this.dropPrepared(),
    });
    stt.on("interim", (text) => {
      this.emit("transcript", { role: "USER", text, final: false });
      this.cutIn?.heard(text);
    });
    stt.on("turn", (event) => !this.closedReason && this.endpointer.providerTurn(event));
    stt.on("closed", (reason) => this.closeWith(reason));
  }

  get sampleRate() {
    return this.options.sampleRate;
  }

  /** Wires the VAD in (it needs this session's handler, so it is made after the session). */
  listen(detector: SpeechDetector) {
    this.detector = detector;
  }

  /** All the caller's audio as it arrives (at the VAD's rate), silence too, for an STT that decides the turns (Flux). */
  readonly hear = (audio: Int16Array) => {
    if (!this.closedReason && audio.length > 0) this.stt.send(audio);
  };

  readonly onSpeech = (event: SpeechEvent) => {
    if (this.closedReason) return;
    if (event.type === "pausing") return this.emit("callerPausing", event.on);
    const finalize = this.stt.finalize?.bind(this.stt);
    if (event.type === "audio") {
      if (finalize) this.stt.send(event.audio);
      return this.cutIn?.window((event.audio.length * 1000) / this.detector.sampleRate, event.speech);
    }
    if (event.type === "start") {
      if (finalize) this.stt.send(event.audio);
      if (this.heardOverAgent()) return;
      this.bargeIn();
      // every caller turn opens one (the call pairs transcripts with them); speech that continues a
      // turn (inside punctuation's wait) opens none
      if (this.endpointer.speechStarted()) this.emit("interrupt");
      return;
    }
    this.lastSpeechAt = event.lastSpeechAt;
    this.endpointer.speechStopped();
    if (!finalize) return; // the provider ends the turn
    this.userTurns = this.userTurns.then(async () => {
      const text = await finalize();
      if (!this.closedReason) this.endpointer.transcribed(text);
    });
  };

  sendAudio(samples: Int16Array) {
    if (this.closedReason) return;
    this.clock.start(); // the first caller audio starts the call, and with it the playout
    this.detector.push(samples);
  }

  sendText(text: string) {
    if (this.closedReason) return;
    this.history.push({ role: "user", content: text });
    this.respond();
  }

  submitToolResult(callId: string, output: string) {
    const resolve = this.pendingTools.get(callId);
    if (!resolve) return log.warn("tool result for an unknown call ignored", { toolCallId: callId });
    this.pendingTools.delete(callId);
    resolve(output);
  }

  close() {
    this.closeWith("closed");
  }

  /** The session's first words: the greeting now, unless it waits for the callee. */
  open() {
    if (this.options.greeting && waitingGreetingOf(this.options) === null) this.greet(this.options.greeting);
  }

  greetIfWaiting() {
    const greeting = this.waitingGreeting;
    this.waitingGreeting = null;
    if (greeting !== null) this.greet(greeting);
  }

  respond() {
    if (this.closedReason) return;
    if (this.reply) this.replyAgain = true;
    else this.startReply();
  }

  /** The greeting (or a message) goes straight to TTS, word for word. */
  greet(greeting: string) {
    // said while a reply waits on its tools (a transfer's or a handoff's message), it is part of that reply, which
    // still ends with the model's answer; and, like the tool filler, kept out of the LLM's history, where it
    // would split the tool calls from their results
    const waiting = this.reply !== null && this.pendingTools.size > 0;
    const reply = waiting && this.reply ? this.reply : this.newReply();
    const utterance = this.newUtterance();
    if (waiting) utterance.aside = true;
    else {
      utterance.message = { role: "assistant", content: greeting };
      this.history.push(utterance.message);
    }
    this.say(utterance, greeting);
    this.endText(utterance);
    if (!waiting) reply.llmDone = true;
  }

  private get agentSpeaking() {
    return this.reply !== null || this.utterances.length > 0;
  }

  /**
   * Speech starting while the agent speaks, under turn_taking's interruption: it does not cut the
   * agent off at once (a CutIn decides), or never (interruption off). False: barge in as always.
   */
  private heardOverAgent(): boolean {
    const { interruption } = this.turnTaking;
    if (!this.agentSpeaking || cutsOffAtOnce(interruption)) return false;
    this.endpointer.speechStarted();
    if (!interruption.enabled) return true;
    this.cutIn ??= new CutIn(interruption, {
      pause: () => {
        this.clock.pause();
        this.emit("pause");
      },
      resume: () => {
        this.clock.resume();
        this.emit("resume");
      },
      interrupt: () => {
        this.bargeIn();
        this.emit("interrupt");
      },
    });
    this.cutIn.speechStarted(this.settings.vad.startDurationMs);
    return true;
  }

  /**
   * The endpointer decided: the caller's turn is over. A reply prepared for this very text on this very
   * history is heard from here on, as it streams; any other is dropped and the LLM asked now. The
   * callee's first turn gets the waiting greeting instead (a blank one too: they spoke, then stopped).
   * Said over the agent, it is answered only if it cut the agent off (or the agent finished meanwhile).
   */
  private endUserTurn(text: string) {
    const decidedAt = performance.now();
    const prepared = this.prepared;
    const usable =
      prepared?.prepared?.text === text && prepared.prepared.historyLength === this.history.length && !this.reply;
    if (!usable) this.dropPrepared();
    if (this.closedReason) return;
    const cutIn = this.cutIn;
    this.cutIn = null;
    if (cutIn?.finish(text) === false) {
      if (this.agentSpeaking) return void this.emit("unanswered", text);
      this.emit("interrupt"); // the agent finished meanwhile: an ordinary turn, opened now
    }
    if (!text && this.waitingGreeting === null) return void this.emit("unanswered", "");
    if (text) {
      this.emit("transcript", { role: "USER", text, final: true });
      // interruption off: answered once the reply being spoken is done
      if (!this.turnTaking.interruption.enabled && this.agentSpeaking) return void this.heldTurns.push(text);
      this.history.push({ role: "user", content: text });
    }
    this.emit("callerTurn", { endedAt: this.lastSpeechAt ?? decidedAt, decidedAt, preemptive: usable });
    this.lastSpeechAt = null;
    if (this.waitingGreeting !== null) return this.greetIfWaiting();
    if (!usable) return this.startReply();
    this.prepared = null;
    this.reply = prepared;
    prepared.llm.release();
    prepared.tts.release();
    prepared.prepared!.release(true);
  }

  /** The turn may be over with `text` (preemptiveGeneration): the LLM starts on it, unheard. */
  private prepareReply(text: string) {
    this.dropPrepared();
    // the first turn's answer is the waiting greeting: nothing to prepare
    if (this.closedReason || this.waitingGreeting !== null) return;
    let release: (heard: boolean) => void = () => {};
    const released = new Promise<boolean>((resolve) => (release = resolve));
    const reply = this.replyOf({ text, historyLength: this.history.length, release, released });
    this.prepared = reply;
    this.runReply(reply).catch((error: Error) => this.closeWith(error.message));
  }

  /** The caller went on (or the turn ended otherwise): the prepared reply is cancelled, never heard. */
  private dropPrepared() {
    const reply = this.prepared;
    if (!reply) return;
    this.prepared = null;
    reply.cancelled = true;
    reply.abort.abort();
    reply.prepared?.release(false);
  }

  private newReply(): Reply {
    const reply = this.replyOf(null);
    this.reply = reply;
    return reply;
  }

  private replyOf(prepared: Prepared | null): Reply {
    const stage = (event: ReplyStageEvent) => this.emit("replyStage", event);
    return {
      abort: new AbortController(),
      llmDone: false,
      cancelled: false,
      prepared,
      llm: new StageTimer("llm", stage, prepared !== null),
      tts: new StageTimer("tts", stage, prepared !== null),
    };
  }

  private startReply() {
    const reply = this.newReply();
    this.runReply(reply).catch((error: Error) => this.closeWith(error.message));
  }

  private async runReply(reply: Reply) {
    const { config } = this.options;
    const tools = [...this.options.tools, endCallTool];
    for (let round = 0; round < maxRoundsPerReply && !reply.cancelled; round++) {
      // a prepared reply's first request runs before its user message is in the history
      const prepared = round === 0 ? reply.prepared : null;
      reply.llm.start();
      const stream = timeFirstEvent(
        reply.llm,
        streamChat({
          ...this.llmTarget(config),
          messages: prepared ? [...this.history, { role: "user", content: prepared.text }] : [...this.history],
          tools,
          signal: reply.abort.signal,
        }),
      );
      const events = prepared ? readAhead(stream) : stream;
      if (prepared && !(await prepared.released)) return;
      const utterance = this.newUtterance();
      const splitter = new SentenceSplitter();
      let text = "";
      let toolCalls: AssembledToolCall[] = [];
      for await (const event of events) {
        if (reply.cancelled) return;
        if (event.type === "end") toolCalls = event.toolCalls;
        else {
          text += event.text;
          for (const sentence of splitter.push(event.text)) this.say(utterance, sentence);
        }
      }
      if (reply.cancelled) return;
      const rest = splitter.flush();
      if (rest) this.say(utterance, rest);
      utterance.message = {
        role: "assistant",
        content: text.trim() || null,
        ...(toolCalls.length > 0 && {
          tool_calls: toolCalls.map((c) => ({
            id: c.id,
            type: "function" as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        }),
      };
      this.history.push(utterance.message);
      this.endText(utterance);
      if (toolCalls.length === 0) break;
      // what the agent says before the tools is in the record before them: wait for its audio
      await utterance.generated;
      if (reply.cancelled) return;
      this.report(utterance);
      const outputs = await this.fillWhileWaiting(
        Promise.all(toolCalls.map((call) => this.runTool(call, reply))),
        reply,
        toolCalls,
      );
      for (const [i, call] of toolCalls.entries()) {
        this.history.push({ role: "tool", tool_call_id: call.id, content: outputs[i] ?? "" });
      }
      if (toolCalls.some((c) => c.name === endCallToolName)) break; // the agent said goodbye: nothing follows
    }
    reply.llmDone = true;
    this.maybeReplyDone();
  }

  private llmTarget(config: Config) {
    const { baseUrl, openaiApiKey: apiKey, providerStallMs: stallMs } = config.voice;
    return { baseUrl, apiKey, stallMs, model: this.settings.llm.model, temperature: this.settings.llm.temperature };
  }

  /**
   * The strategy's toolFiller: once the tools have run afterMs without answering, the agent says the
   * filler (once per round), so a slow lookup is not silence on the line. A fast one says nothing.
   */
  private async fillWhileWaiting<T>(outputs: Promise<T>, reply: Reply, toolCalls: AssembledToolCall[]): Promise<T> {
    const filler = this.settings.toolFiller;
    if (!filler || toolCalls.every((c) => c.name === endCallToolName)) return outputs;
    const timer = setTimeout(() => {
      if (reply.cancelled || this.reply !== reply || this.closedReason) return;
      const utterance = this.newUtterance();
      utterance.aside = true;
      this.say(utterance, filler.text);
      this.endText(utterance);
    }, filler.afterMs);
    try {
      return await outputs;
    } finally {
      clearTimeout(timer);
    }
  }

  private runTool(call: AssembledToolCall, reply: Reply): Promise<string> {
    const args = parseToolArguments(call.arguments, call.name);
    if (call.name === endCallToolName) {
      this.emit("endCall", { reason: typeof args.reason === "string" ? args.reason : null });
      return Promise.resolve("The call is ending.");
    }
    return new Promise((resolve) => {
      this.pendingTools.set(call.id, resolve);
      reply.abort.signal.addEventListener("abort", () => this.submitToolResult(call.id, cancelledToolOutput), {
        once: true,
      });
      this.emit("toolCall", { callId: call.id, name: call.name, arguments: args });
    });
  }

  private newUtterance(): Utterance {
    let markGenerated = () => {};
    const generated = new Promise<void>((resolve) => (markGenerated = resolve));
    const utterance: Utterance = {
      text: "",
      chunks: [],
      stream: null,
      opening: null,
      generated,
      markGenerated,
      reported: false,
      message: null,
      aside: false,
      finishTimer: null,
    };
    this.utterances.push(utterance);
    return utterance;
  }

  /** Sends a sentence to the utterance's TTS stream, opening it on the first one. */
  private say(utterance: Utterance, sentence: string) {
    utterance.text = utterance.text ? `${utterance.text} ${sentence}` : sentence;
    this.emit("transcript", { role: "ASSISTANT", text: utterance.text, final: false });
    utterance.opening ??= this.tts.take().then((stream) => this.attach(utterance, stream));
    const reply = this.reply;
    void utterance.opening.then(
      (stream) => {
        reply?.tts.start();
        stream.text(sentence);
      },
      (error: Error) => this.closeWith(error.message),
    );
  }

  private attach(utterance: Utterance, stream: SpeechStream): SpeechStream {
    utterance.stream = stream;
    if (!this.utterances.includes(utterance)) stream.cancel(); // interrupted while the stream was being opened
    stream.on("audio", (samples, alignment) => {
      const audio = this.fromTts.process(samples);
      utterance.chunks.push(this.clock.add((audio.length * 1000) / this.sampleRate, alignment));
      this.reply?.tts.end();
      this.emit("audio", audio);
    });
    stream.on("done", () => {
      utterance.markGenerated();
      this.scheduleFinish(utterance);
    });
    stream.on("failed", (reason) => this.closeWith(reason));
    return stream;
  }

  private endText(utterance: Utterance) {
    if (utterance.opening)
      void utterance.opening.then(
        (stream) => stream.end(),
        () => {},
      );
    else {
      utterance.markGenerated(); // nothing to say (a round that only called tools)
      this.scheduleFinish(utterance);
    }
  }

  /** The utterance is final once its audio has played (or at once when it has none). */
  private scheduleFinish(utterance: Utterance) {
    const last = utterance.chunks.at(-1);
    // paused, its audio waits as long as the pause lasts: look again later
    const remaining = this.clock.paused ? Number.NaN : last ? last.startsAt + last.durationMs - performance.now() : 0;
    if (remaining <= 0) return this.finishUtterance(utterance);
    // before the call started (or while paused) the audio waits; check again once time passes
    utterance.finishTimer = setTimeout(
      () => this.scheduleFinish(utterance),
      Number.isFinite(remaining) ? remaining : 100,
    );
  }

  private finishUtterance(utterance: Utterance) {
    if (!this.utterances.includes(utterance)) return;
    this.utterances = this.utterances.filter((u) => u !== utterance);
    this.report(utterance);
    this.maybeReplyDone();
  }

  private report(utterance: Utterance, text = utterance.text) {
    if (utterance.reported) return;
    utterance.reported = true;
    if (text) this.emit("transcript", { role: "ASSISTANT", text, final: true });
  }

  private maybeReplyDone() {
    const reply = this.reply;
    if (!reply?.llmDone || this.utterances.length > 0) return;
    this.reply = null;
    this.emit("turnDone", { interrupted: false });
    const held = this.heldTurns.splice(0);
    if (held.length > 0) {
      this.history.push({ role: "user", content: held.join(" ") });
      this.replyAgain = true;
    }
    if (this.replyAgain && !this.closedReason) {
      this.replyAgain = false;
      this.startReply();
    }
  }

  /**
   * The caller spoke over the agent: the reply stops (LLM, tools' wait, TTS) and each utterance keeps
   * only what was heard, in the call's messages and in the LLM's history.
   */
  private bargeIn() {
    const now = this.clock.heardUntil(); // paused: the caller heard up to the pause
    const reply = this.reply;
    this.reply = null;
    this.replyAgain = false;
    if (reply) {
      reply.cancelled = true;
      reply.abort.abort();
    }
    for (const utterance of this.utterances.splice(0)) {
      if (utterance.finishTimer) clearTimeout(utterance.finishTimer);
      utterance.stream?.cancel();
      utterance.markGenerated();
      const heard = heardText(utterance.text, utterance.chunks, now);
      this.report(utterance, heard);
      this.keepHeard(utterance, heard);
    }
    this.clock.flush();
    if (reply) this.emit("turnDone", { interrupted: true });
  }

  private keepHeard(utterance: Utterance, heard: string) {
    if (utterance.aside) return;
    const message = utterance.message;
    if (!message) {
      if (heard) this.history.push({ role: "assistant", content: heard }); // cut off while the LLM still streamed
      return;
    }
    if (message.role !== "assistant") return;
    if (heard || message.tool_calls) message.content = heard || null;
    else this.history.splice(this.history.indexOf(message), 1);
  }

  private closeWith(reason: string) {
    if (this.closedReason) return;
    this.closedReason = reason;
    if (this.reply) this.reply.abort.abort();
    this.dropPrepared();
    for (const utterance of this.utterances.splice(0)) {
      if (utterance.finishTimer) clearTimeout(utterance.finishTimer);
      utterance.stream?.cancel();
      utterance.markGenerated();
    }
    this.detector?.stop();
    this.endpointer.close();
    this.cutIn?.close();
    this.stt.close();
    this.tts.close();
    if (reason !== "closed") {
      if (this.listenerCount("error") > 0) this.emit("error", new Error(reason));
      else log.warn("voice session error", { error: reason });
    }
    this.emit("closed", { reason });
  }
}

/** The LLM's stream as it is, ending `llm` at its first event (as it arrives: a prepared reply's is read ahead). */
async function* timeFirstEvent<T>(llm: StageTimer, events: AsyncIterable<T>): AsyncGenerator<T> {
  for await (const event of events) {
    llm.end();
    yield event;
  }
}

export function ttsOptions(settings: PipelineSettings, config: Config): TtsOptions {
  const { voiceId, modelId, outputFormat, voiceSettings } = settings.tts;
  const { elevenlabsUrl: url, elevenlabsApiKey: apiKey, providerStallMs: stallMs } = config.voice;
  return { url, apiKey, voiceId, modelId, outputFormat, voiceSettings, stallMs };
}
