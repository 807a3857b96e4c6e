// One call's conversation, free of sockets and the database: caller audio to the voice session, agent
// audio paced back out, barge-in, tool webhooks, the message history, the recording and why it ended.
import { join } from "node:path";
import {
  createCallRecorder,
  type CallRecorder,
  type FinishedRecording,
  type RecordingFormat,
} from "../audio/call-recorder";
import { describeError } from "../errors";
import type { CallHandoff, CallMessage } from "../events/payloads";
import { createTurnQueue } from "../lib/turn-queue";
import { log } from "../log";
import type { OutboundGuard } from "../net/outbound-guard";
import type { ToolCallEvent, TranscriptEvent, VoiceSession } from "../voice/engine";
import { isHandoffTool, isTransferTool, type CallTool, type HandoffTool, type TransferTool } from "../voice/tools";
import type { KnowledgeSearch } from "./knowledge-tool";
import { CallMessages } from "./call-messages";
import type { BridgedCall, CallerTransport, EndReason } from "./caller-transport";
import { sharedTicker, type FrameTicker } from "./frame-ticker";
import { Playout } from "./playout";
import { runToolCall } from "./run-tool-call";
import type { ToolRunner } from "./test-call-tools";
import { runTransfer } from "./transfer-call";
import { HoldTone } from "./hold-tone";
import type { TranscriptLine } from "../voice/summarize";
import { turnTakingWithoutExtension, type TurnTaking } from "../voice/turn-taking/turn-taking";
import type { CallLatency } from "../models/call-latency";
import { TurnLatencyRecorder } from "./turn-latency";
import { IdleWatch } from "../voice/turn-taking/idle";
import { renderTemplate } from "./templates";
import { CallerAudioHold, Handoffs, type ConnectAssistant, type ConnectedAssistant, type Opening } from "./handoff";

export type CallOutcome = {
  reason: EndReason;
  error: string | null;
  startedAt: number | null;
  endedAt: number;
  messages: CallMessage[];
  /** the transfer destination's `to` when the call ended handed to a human */
  transferredTo: string | null;
  /** WAV file of the whole call (both sides mixed), null when it never started. */
  recording: FinishedRecording | null;
  /** latency per turn, null when it never started */
  latency: CallLatency | null;
  /** the assistants the caller was handed to, in order */
  handoffs: CallHandoff[];
};

export type CallSessionOptions = {
  callId: string;
  transport: CallerTransport;
  tools: CallTool[];
  toolTimeoutMs: number;
  /** KNOWLEDGE_TIMEOUT_MS; 3 s when left out */
  knowledgeTimeoutMs?: number;
  /** our knowledge bases' search (knowledge_base tools with a knowledgeBaseId); none when left out */
  knowledgeSearch?: KnowledgeSearch;
  /** every tool server is reached through it */
  toolGuard: OutboundGuard;
  maxCallMs: number;
  /** what the call's templates see (a transfer message is one) */
  variables?: Readonly<Record<string, string>>;
  /** where and how the call is recorded (a WAV file per call in `dir`) */
  recording: { dir: string; format: RecordingFormat; maxBytes: number };
  ticker?: FrameTicker;
  /** text: no audio either way (user_text in, transcripts out); the call starts once the voice is ready */
  modality?: "audio" | "text";
  /** the assistant's turn_taking, resolved: the voice engine gets the same; default as without the extension */
  turnTaking?: TurnTaking;
  /** answers the LLM's tool calls: the tools' webhooks, or a test call's mocks */
  runTool?: ToolRunner;
  /** a warm transfer's brief for the human: a short summary of the call so far (null: none to be had) */
  summarize?: (transcript: TranscriptLine[]) => Promise<string | null>;
  /** handoff tools: the assistant answering first (null: an agent) and how a destination is connected */
  handoff?: { entryAssistantId: string | null; connect: ConnectAssistant };
};

const noSearch: KnowledgeSearch = () => Promise.reject(new Error("no knowledge base search in this call"));

// the agent's goodbye should play out, but a response that never finishes must not hold the call
const hangupGraceMs = 15_000;
const maxUtteranceSeconds = 30;
// a transfer message that never reports played still lets the transfer go on: speech runs ~15 characters a second
const speakBoundMs = 3_000;
const msPerCharacter = 100;
// the caller is on hold while the brief is written: a summary later than this is done without
const summaryBoundMs = 5_000;
const noSummary = "A caller is being transferred to you.";
// calls that end in the same instant (a burst of hang-ups) finish one per event-loop turn
const endings = createTurnQueue((error) => log.error("call end failed", { error: describeError(error) }));

export class CallSession {
  readonly callId: string;
  /** The moment audio began (Unix ms), or null when the call ended before that. */
  readonly started: Promise<number | null>;
  readonly ended: Promise<CallOutcome>;
  private resolveStarted!: (startedAt: number | null) => void;
  private resolveEnded!: (outcome: CallOutcome) => void;
  private readonly transport: CallerTransport;
  private readonly playout: Playout;
  private readonly messages: CallMessages;
  private readonly latency: TurnLatencyRecorder;
  /** turn_taking's idle of the assistant speaking: prompts a quiet caller, then ends the call (null: never) */
  private idle: IdleWatch | null;
  private readonly toolsInFlight = new Set<Promise<void>>();
  private readonly timers: ReturnType<typeof setTimeout>[] = [];
  private voice: VoiceSession | null = null;
  /** the tools of the assistant speaking (a handoff brings the destination's) */
  private tools: CallTool[];
  private readonly handoffs: Handoffs | null;
  /** a handoff under way: the caller's audio waits here for the destination */
  private held: CallerAudioHold | null = null;
  private recorder: CallRecorder | null = null;
  private startedAt: number | null = null;
  private hangupAfterTurn = false;
  private transferredTo: string | null = null;
  /** joined to a transfer's second leg: the assistant has left, the recording goes on */
  private bridged = false;
  /** a warm transfer's briefing: the agent's audio goes to the human, the caller is on hold */
  private briefing: NonNullable<BridgedCall["pending"]> | null = null;
  private hangupReason: EndReason = "agent-hangup";
  private ending = false;
  /** aborted when the call ends: a test call's mock stops waiting out its delay */
  private readonly endedSignal = new AbortController();

  constructor(private readonly options: CallSessionOptions) {
    this.callId = options.callId;
    this.transport = options.transport;
    this.tools = options.tools;
    const { handoff } = options;
    this.handoffs = handoff
      ? new Handoffs(options.callId, handoff.entryAssistantId, handoff.connect, options.variables ?? {})
      : null;
    this.started = new Promise((resolve) => (this.resolveStarted = resolve));
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    this.messages = new CallMessages(options.transport.sampleRate * maxUtteranceSeconds);
    this.latency = new TurnLatencyRecorder(options.modality !== "text");
    this.playout = new Playout(
      options.transport.sampleRate,
      (frame) => this.playFrame(frame),
      options.ticker ?? sharedTicker,
      options.transport.leadMs,
      // recorded as the caller hears it, not when handed over (up to the lead early; a pause takes that back)
      (frame) => this.recorder?.add("agent", frame),
    );
    this.idle = this.idleWatchOf(options.turnTaking ?? turnTakingWithoutExtension);
    this.timers.push(setTimeout(() => this.end("max-duration"), options.maxCallMs));
  }

  private idleWatchOf({ idle }: TurnTaking) {
    return (
      idle && new IdleWatch(idle, { prompt: (t) => this.promptIdle(t), hangup: () => this.end("silence-timeout") })
    );
  }

  /** The voice session is ready, with the tools it offers (default the options'): the call can start once audio flows. */
  attachVoice(voice: VoiceSession, tools = this.options.tools) {
    if (this.ending) return voice.close();
    this.tools = tools;
    this.listen(voice);
    this.transport.notify({ type: "ready", callId: this.callId, sampleRate: this.transport.sampleRate });
    if (this.options.modality === "text") this.start();
  }

  private listen(voice: VoiceSession) {
    this.voice = voice;
    voice.on("audio", (samples) => {
      this.idle?.agentSpeaks();
      this.messages.agentAudio(samples, this.playsAt());
      this.playout.push(samples, this.latency.replyAudio());
    });
    voice.on("transcript", (event) => this.onTranscript(event));
    voice.on("interrupt", () => this.onInterrupt());
    voice.on("pause", () => {
      this.playout.pause();
      this.transport.pauseAudio();
    });
    voice.on("resume", () => {
      this.transport.resumeAudio();
      this.playout.resume();
    });
    voice.on("callerPausing", (on) => this.transport.expediteInput?.(on));
    voice.on("unanswered", (text) => {
      if (text) this.onTranscript({ role: "USER", text, final: true });
      this.idle?.callerUnanswered(text !== "");
    });
    voice.on("toolCall", (event) => this.onToolCall(event));
    voice.on("endCall", ({ reason }) => this.onEndCall(reason));
    voice.on("turnDone", (info) => this.onTurnDone(info));
    voice.on("callerTurn", (event) => this.latency.callerTurn(event));
    voice.on("replyStage", (event) => this.latency.replyStage(event));
    voice.on("error", (error) => log.warn("call voice error", { callId: this.callId, error: error.message }));
    voice.on("closed", ({ reason }) => this.end("provider-disconnected", `voice provider disconnected: ${reason}`));
  }

  /** The caller's turn as text: in the record and the transcript like speech, then to the agent. */
  callerText(text: string) {
    if (this.ending || !this.voice || !text.trim()) return;
    if (this.startedAt === null) this.start();
    this.idle?.callerSpeaks();
    this.messages.userText(text, Date.now());
    this.transport.notify({ type: "transcript", role: "USER", text, final: true });
    this.latency.textTurn();
    this.voice.sendText(text);
  }

  /** A call whose agent does not speak first tells the caller at once that it is their turn. */
  callerTurnFirst() {
    if (!this.ending) this.transport.notify({ type: "turn_done" });
  }

  /**
   * Caller audio (PCM16 at the transport's rate, and the caller's mu-law bytes when it sent those);
   * the first frame after the voice is ready starts the call.
   */
  callerAudio(samples: Int16Array, ulaw: Uint8Array | null = null) {
    // bridged, or on hold while the human is briefed: recorded, not heard by the assistant
    if ((this.bridged || this.briefing) && !this.ending) return this.recorder?.add("caller", samples);
    if (this.ending || !this.voice) return; // before the provider listens there is no one to hear it
    if (this.startedAt === null) this.start();
    this.recorder?.add("caller", samples);
    this.messages.callerAudio(samples);
    if (this.held) this.held.push(samples);
    else this.voice.sendAudio(samples, ulaw);
  }

  /** Keypad digits: the LLM reads them as a user message, and they join the call's messages. */
  callerDtmf(digits: string) {
    if (this.ending || !this.voice) return;
    const text = `The caller pressed ${digits} on the keypad.`;
    log.info("call", { callId: this.callId, event: "dtmf", digits: digits.length });
    this.idle?.callerSpeaks();
    this.messages.userText(text, Date.now());
    this.voice.sendText(text);
  }

  /**
   * Ends the call once; the caller is told why and disconnected. Late calls are ignored. What must stop
   * at once stops here (no frame is played or recorded after this); the rest (the recording's last
   * second, the notices, the hang-up, the record) waits for its event-loop turn in `endings`.
   */
  end(reason: EndReason, error: string | null = null) {
    if (this.ending) return;
    this.ending = true;
    this.endedSignal.abort();
    // a bridged transfer succeeded: whoever hangs up (or the time limit), the call was transferred
    if (this.bridged && reason !== "transferred") {
      log.info("call", { callId: this.callId, event: "bridge_hangup", reason });
      reason = "transferred";
    }
    const endedAt = Date.now();
    const recordedUntil = performance.now();
    const recorder = this.recorder;
    this.recorder = null;
    this.timers.forEach(clearTimeout);
    this.idle?.close();
    this.playout.stop();
    this.voice?.close();
    endings(() => this.finishEnd(reason, error, endedAt, this.finishRecording(recorder, recordedUntil)));
  }

  private finishEnd(
    reason: EndReason,
    error: string | null,
    endedAt: number,
    recording: Promise<FinishedRecording | null>,
  ) {
    this.resolveStarted(null); // no-op once started
    // first, so that a transport failing below cannot keep the call from its record; tool calls still
    // running are bounded by their time-out, and their results belong to the record
    void Promise.allSettled(this.toolsInFlight).then(async () =>
      this.resolveEnded({
        reason,
        error,
        startedAt: this.startedAt,
        endedAt,
        messages: this.messages.finish(this.startedAt),
        transferredTo: this.transferredTo,
        handoffs: this.handoffs?.records ?? [],
        recording: await recording,
        latency: this.startedAt === null ? null : this.latency.finish(),
      }),
    );
    if (error) this.transport.notify({ type: "error", message: error });
    this.transport.notify({ type: "ended", callId: this.callId, reason });
    this.transport.hangup(reason);
    log.info("call", {
      callId: this.callId,
      event: "ended",
      reason,
      error,
      durationMs: this.startedAt ? endedAt - this.startedAt : null,
      lateFrames: this.playout.lateFrames,
    });
  }

  private start() {
    this.startedAt = Date.now();
    const { dir, format, maxBytes } = this.options.recording;
    // a text call has no audio to record
    if (this.options.modality !== "text")
      try {
        this.recorder = createCallRecorder({
          sampleRate: this.transport.sampleRate,
          path: join(dir, `${this.callId}.wav`),
          format,
          maxBytes,
        });
      } catch (error) {
        log.error("call not recorded", { callId: this.callId, error: describeError(error) });
      }
    this.playout.start();
    log.info("call", { callId: this.callId, event: "started" });
    this.resolveStarted(this.startedAt);
  }

  /** Completes the recording's file up to `until`; a call whose recording failed still concludes, without one. */
  private async finishRecording(recorder: CallRecorder | null, until: number): Promise<FinishedRecording | null> {
    if (!recorder) return null;
    try {
      const recording = await recorder.finish(until);
      if (recording.truncated) log.warn("call recording truncated", { callId: this.callId, bytes: recording.bytes });
      return recording;
    } catch (error) {
      log.error("call recording lost", { callId: this.callId, error: describeError(error) });
      return null;
    }
  }

  private playFrame(frame: Int16Array) {
    if (this.briefing) this.briefing.playAudio(frame);
    else this.transport.playAudio(frame);
  }

  /** When agent audio arriving now will be heard: after what is queued (or at the start of the call). */
  private playsAt() {
    return Date.now() + Math.round(this.playout.queuedMs);
  }

  private onTranscript(event: TranscriptEvent) {
    if (event.role === "ASSISTANT") this.idle?.agentSpeaks();
    else if (event.final && event.text) this.idle?.callerSpeaks();
    if (event.text) this.transport.notify({ type: "transcript", ...event }); // a blank final only closes a turn
    this.messages.transcript(event, this.playsAt());
  }

  private onInterrupt() {
    this.idle?.callerSpeaks();
    this.playout.flush();
    this.transport.clearAudio();
    this.messages.agentDone();
    this.messages.userSpeechStarted(Date.now());
  }

  private onTurnDone(info: { interrupted: boolean }) {
    this.latency.replyDone(info);
    this.messages.agentDone();
    if (this.hangupAfterTurn) return this.playout.whenDrained(() => this.end(this.hangupReason));
    this.playout.whenDrained(() => this.idle?.agentDone());
    // with a tool call pending the agent goes on once its result is in: not yet the caller's turn
    if (this.toolsInFlight.size === 0 && !this.ending) this.transport.notify({ type: "turn_done" });
  }

  /** turn_taking's idle: the caller has been quiet; the next prompt, with the call's variables. */
  private promptIdle(template: string) {
    if (this.ending || !this.voice) return;
    log.info("call", { callId: this.callId, event: "idle_prompt" });
    this.voice.greet(renderTemplate(template, this.options.variables ?? {}));
  }

  /** Speaks `text` word for word, then ends the call with `reason` once it has played (a voicemail message). */
  sayThenEnd(text: string, reason: EndReason) {
    if (this.ending || !this.voice) return this.end(reason);
    this.hangupReason = reason;
    this.hangupAfterTurn = true;
    this.voice.greet(text);
  }

  private onEndCall(reason: string | null) {
    log.info("call", { callId: this.callId, event: "agent_hangup", reason });
    this.hangupAfterTurn = true;
    this.timers.push(setTimeout(() => this.end("agent-hangup"), hangupGraceMs));
  }

  /** A transfer_call tool: once the caller is with the destination (or onFailure hangs up) the call ends. */
  private async transfer(event: ToolCallEvent, tool: TransferTool) {
    const outcome = await runTransfer({
      callId: this.callId,
      event,
      tool,
      transport: this.transport,
      variables: this.options.variables ?? {},
      speak: (text) => this.speak(text),
      brief: (bridged) => this.brief(bridged),
    });
    if (outcome.transferredTo) {
      this.transferredTo = outcome.transferredTo;
      if (outcome.bridged) this.joinBridge(outcome.bridged);
      else this.end("transferred");
    } else if (outcome.hangup) this.end("agent-hangup", outcome.output);
    return outcome;
  }

  /**
   * A bridged transfer: the assistant leaves (its provider session closed, nothing more played to the
   * caller) and the call goes on between the two people, recorded, until either hangs up.
   */
  private joinBridge(bridged: BridgedCall) {
    if (this.ending) return; // the transport's hang-up has ended the bridge
    this.bridged = true;
    this.idle?.close();
    this.leaveVoice();
    this.playout.stop();
    this.transport.clearAudio();
    this.recordDestination(bridged);
    void bridged.ended.then(() => this.end("transferred"));
  }

  /** Lets go of the voice: nothing it still sends (its audio, its "closed") belongs to the call any more. */
  private leaveVoice() {
    const voice = this.voice;
    this.voice = null;
    voice?.removeAllListeners();
    this.transport.expediteInput?.(false); // (a pause it told of ends with it)
    voice?.on("error", () => {});
    voice?.close();
  }

  /** A handoff tool (calls/handoff.ts): the destination assistant takes the call, or the LLM learns why not. */
  private handOff(event: ToolCallEvent, tool: HandoffTool) {
    if (!this.handoffs) return Promise.resolve({ output: "Handoffs are unavailable on this call.", durationMs: 0 });
    return this.handoffs.run(event, tool, {
      messages: () => this.messages.soFar(),
      speak: (text) => this.speak(text),
      holdCaller: () => {
        this.held ??= new CallerAudioHold();
      },
      releaseCaller: () => this.releaseHeld(),
      switchTo: (destination, opening) => this.switchTo(destination, opening),
    });
  }

  /** What the caller said while held goes to the voice now speaking. */
  private releaseHeld() {
    const held = this.held;
    this.held = null;
    for (const samples of held?.drain() ?? []) this.voice?.sendAudio(samples);
  }

  /** The destination's voice replaces the assistant's; what the assistant still plays goes on first. */
  private switchTo(destination: ConnectedAssistant, opening: Opening) {
    if (this.ending) return destination.voice.close();
    this.messages.agentDone();
    this.leaveVoice();
    this.tools = destination.tools;
    // the destination's idle prompts from now on; it knows of the tools still running (the handoff's own among them)
    this.idle?.close();
    this.idle = this.idleWatchOf(destination.turnTaking);
    for (const _ of this.toolsInFlight) this.idle?.toolStarted();
    this.listen(destination.voice);
    this.releaseHeld();
    if (opening === "respond") destination.voice.respond();
    else if (opening === "wait") this.callerTurnFirst();
    else destination.voice.greet(opening.greet);
  }

  /** The destination's voice goes into the recording on the agent's side (the assistant's place). */
  private recordDestination(bridged: BridgedCall) {
    bridged.onAudio((samples) => {
      if (!this.ending) this.recorder?.add("agent", samples);
    });
  }

  /**
   * A warm transfer: the human's leg is up but not joined. The assistant speaks a short summary of the
   * call to the human (the agent's audio goes to that leg) while the caller hears the hold tone; once
   * it has played the legs are joined. The human hanging up meanwhile returns the caller to the
   * assistant, which hears why in the tool result.
   */
  private async brief(bridged: BridgedCall): Promise<{ joined: true } | { joined: false; why: string }> {
    const pending = bridged.pending;
    if (!pending || this.ending) return { joined: false, why: "the call ended" };
    this.playout.flush();
    this.transport.clearAudio();
    const hold = new HoldTone(
      this.transport.sampleRate,
      (frame) => this.transport.playAudio(frame),
      this.options.ticker ?? sharedTicker,
    );
    hold.start();
    this.recordDestination(bridged);
    const left = bridged.ended.then(() => "left" as const);
    const summary = this.options.summarize
      ? await Promise.race([
          this.options.summarize(this.messages.transcriptSoFar()).catch(() => null),
          Bun.sleep(summaryBoundMs).then(() => null),
          left.then(() => null),
        ])
      : null;
    // the playout now feeds the human's leg, at its lead
    this.briefing = pending;
    const spoken = await Promise.race([
      this.speak(`${summary ?? noSummary} Connecting you now.`).then(() => "spoken" as const),
      left,
    ]);
    hold.stop();
    this.briefing = null;
    if (spoken === "left" || this.ending) {
      this.playout.flush();
      return { joined: false, why: "the destination hung up before the caller was put through" };
    }
    pending.join();
    log.info("call", { callId: this.callId, event: "briefed", summarized: summary !== null });
    return { joined: true };
  }

  /**
   * Speaks `text` word for word and settles once it has played out: its final transcript (reported
   * once the provider counts it played) and our playout drained; bounded for a provider that never says it.
   */
  private speak(text: string): Promise<void> {
    const voice = this.voice;
    if (!voice || this.ending) return Promise.resolve();
    return new Promise((resolve) => {
      const wanted = text.trim().toLowerCase();
      const done = () => {
        clearTimeout(bound);
        voice.off("transcript", onTranscript);
        resolve();
      };
      const onTranscript = (event: TranscriptEvent) => {
        if (event.role === "ASSISTANT" && event.final && event.text.trim().toLowerCase() === wanted)
          this.playout.whenDrained(done);
      };
      const bound = setTimeout(done, speakBoundMs + text.length * msPerCharacter);
      voice.on("transcript", onTranscript);
      voice.greet(text);
    });
  }

  private onToolCall(event: ToolCallEvent) {
    this.idle?.toolStarted();
    this.messages.toolCall(event, Date.now());
    this.transport.notify({
      type: "tool_call",
      toolCallId: event.callId,
      name: event.name,
      arguments: event.arguments,
    });
    const { toolTimeoutMs, toolGuard, knowledgeTimeoutMs = 3_000, knowledgeSearch = noSearch } = this.options;
    const { tools } = this;
    const request = {
      callId: this.callId,
      event,
      tools,
      timeoutMs: toolTimeoutMs,
      knowledgeTimeoutMs,
      knowledgeSearch,
      transport: this.transport.descriptor,
      guard: toolGuard,
      callEnded: this.endedSignal.signal,
    };
    // the voice that asked gets the answer: after a handoff it has left the call
    const voice = this.voice;
    const tool = tools.find((t) => t.tool.name === event.name);
    // a handoff is never mocked: a test run checks the squad; otherwise a test call's tools are its
    // mocks (a mocked transfer transfers nothing)
    const answer =
      tool && isHandoffTool(tool)
        ? this.handOff(event, tool)
        : this.options.runTool
          ? this.options.runTool(request)
          : tool && isTransferTool(tool)
            ? this.transfer(event, tool)
            : runToolCall(request);
    const running = answer.then(({ output, durationMs }) => {
      this.messages.toolResult(event.callId, event.name, output, Date.now(), durationMs);
      if (!this.ending)
        this.transport.notify({ type: "tool_result", toolCallId: event.callId, name: event.name, output });
      if (!this.ending && this.voice === voice) voice?.submitToolResult(event.callId, output);
    });
    this.toolsInFlight.add(running);
    void running.finally(() => {
      this.toolsInFlight.delete(running);
      this.idle?.toolFinished();
    });
  }
}
