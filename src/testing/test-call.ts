// One test call over the bridge's native websocket protocol (design.md, "How a test call runs"): the
// caller speaks a turn once the agent has finished its reply (`turn_done`; the greeting counts as one),
// and hangs up after the reply to its last turn, or when `nextStep` says so. In text the turns are
// `user_text`; in audio they are spoken (audio-caller.ts) and the agent's replies heard, and the time
// from the end of each turn to the agent's first audio is measured at the socket.
// Runs in the worker (Node): the `ws` package, no Bun API.
import WebSocket from "ws";
import { bytesToPcm } from "../audio/pcm";
import { CALLER_RATE, CallerEar, CallerLine, synthesize, type VoiceConfig } from "./audio-caller";
import type { Utterance } from "./observed-call";

export type CallerStep = { say: string } | { silenceMs: number } | { endCall: true };

export type WireToolCall = { toolCallId: string; name: string; arguments: Record<string, unknown>; output?: string };

export type TestCallOutcome = {
  callId: string | null;
  utterances: Utterance[];
  toolCalls: WireToolCall[];
  /** the caller's utterances (maxTurns counts these) */
  turns: number;
  durationMs: number;
  /** audio: end of each caller turn to the agent's first audio after it */
  firstAudioMs: number[];
  /** why the call could not complete (the result is then an error) */
  error: string | null;
};

export type TestCallOptions = {
  /** the bridge's /v1/calls URL with the test call's credentials in its query */
  url: string;
  variables?: Record<string, string>;
  /** the caller's next step given the conversation so far */
  nextStep: (conversation: readonly Utterance[]) => Promise<CallerStep>;
  maxDurationMs: number;
  /** the longest the agent may take to finish one reply */
  replyTimeoutMs?: number;
  /** the audio modality, with the environment's TTS and STT providers (else text) */
  audio?: VoiceConfig;
};

// audio: a reply is over once turn_done has come and its audio has stopped arriving this long
const REPLY_QUIET_MS = 400;

type WireMessage = { type?: string; [key: string]: unknown };

export async function placeTestCall(options: TestCallOptions): Promise<TestCallOutcome> {
  const started = performance.now();
  const { audio } = options;
  const outcome: TestCallOutcome = {
    callId: null,
    utterances: [],
    toolCalls: [],
    turns: 0,
    durationMs: 0,
    firstAudioMs: [],
    error: null,
  };
  const url = new URL(options.url);
  if (audio) url.searchParams.set("sampleRate", String(CALLER_RATE));
  const socket = new WebSocket(url);
  let ear: CallerEar | null = null;
  let line: CallerLine | null = null;
  let lastAgentAudioAt = 0;
  /** the caller has spoken a turn whose answer has not been heard yet */
  let awaitingAnswer = false;
  const inbox: WireMessage[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  let closeReason = "";
  socket.on("message", (data, isBinary) => {
    if (isBinary) return void (audio && heardAudio(data as Buffer));
    try {
      inbox.push(JSON.parse(data.toString()) as WireMessage);
    } catch {}
    wake?.();
  });
  socket.on("close", (code, reason) => {
    closed = true;
    closeReason = `${code}${reason.length ? ` ${reason.toString()}` : ""}`;
    wake?.();
  });
  socket.on("error", (error) => {
    closeReason ||= error.message;
  });
  const deadline = started + options.maxDurationMs;

  function heardAudio(data: Buffer) {
    const now = performance.now();
    lastAgentAudioAt = now;
    // the answer may begin while the quiet after the caller's last words still goes out
    const voiceEndedAt = line?.voiceEndedAt ?? null;
    if (awaitingAnswer && voiceEndedAt !== null) {
      outcome.firstAudioMs.push(Math.round(now - voiceEndedAt));
      awaitingAnswer = false;
    }
    ear?.hear(bytesToPcm(data));
  }

  /** The agent's reply has ended (turn_done): in audio, once its audio has played out, what was heard of it. */
  async function replyEnded(from: number) {
    if (!audio || !ear) return;
    while (!closed && performance.now() - lastAgentAudioAt < REPLY_QUIET_MS && performance.now() < deadline)
      await read(() => false, REPLY_QUIET_MS - (performance.now() - lastAgentAudioAt));
    const heard = await ear.reply();
    // the reply's intended transcript, as one utterance beside what was heard of it
    const said = outcome.utterances.splice(from).filter((u) => u.by === "agent");
    if (said.length || heard) outcome.utterances.push({ by: "agent", text: said.map((u) => u.text).join(" "), heard });
  }

  /** What the caller knows of the conversation: in audio, the agent's words as heard. */
  const conversation = (): readonly Utterance[] =>
    audio
      ? outcome.utterances.map((u) => (u.by === "agent" ? { by: u.by, text: u.heard ?? "" } : u))
      : outcome.utterances;

  async function speak(text: string) {
    if (!audio || !line) return void socket.send(JSON.stringify({ type: "user_text", text }));
    const samples = await synthesize(audio, text);
    awaitingAnswer = true;
    await line.speak(samples);
  }

  /** Takes messages until `until` says stop; false when the call ended or time ran out first. */
  async function read(until: (m: WireMessage) => boolean, timeoutMs: number): Promise<boolean> {
    const end = Math.min(deadline, performance.now() + timeoutMs);
    for (;;) {
      const message = inbox.shift();
      if (message) {
        record(message);
        if (until(message)) return true;
        continue;
      }
      if (closed) return false;
      const left = end - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, left);
      });
      wake = null;
    }
  }

  function record(m: WireMessage) {
    if (m.type === "ready") outcome.callId = String(m.callId);
    if (m.type === "transcript" && m.final === true && m.role === "ASSISTANT" && typeof m.text === "string")
      outcome.utterances.push({ by: "agent", text: m.text });
    if (m.type === "tool_call")
      outcome.toolCalls.push({
        toolCallId: String(m.toolCallId),
        name: String(m.name),
        arguments: (m.arguments as Record<string, unknown>) ?? {},
      });
    if (m.type === "tool_result") {
      const call = outcome.toolCalls.find((c) => c.toolCallId === m.toolCallId);
      if (call) call.output = String(m.output ?? "");
    }
  }

  const replyTimeoutMs = options.replyTimeoutMs ?? 60_000;
  const ended = () => closed && inbox.length === 0;
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("unexpected-response", (_req, res) =>
        reject(new Error(`the bridge refused the call: ${res.statusCode}`)),
      );
      socket.once("error", reject);
    });
    socket.send(
      JSON.stringify({ type: "start", modality: audio ? "audio" : "text", variables: options.variables ?? {} }),
    );
    if (audio) {
      ear = await CallerEar.open(audio);
      line = new CallerLine((frame) => socket.readyState === WebSocket.OPEN && socket.send(frame));
    }
    if (!(await read((m) => m.type === "ready", 15_000)))
      throw new Error(`no ready from the bridge (${closeReason || "time-out"})`);
    // the greeting is a reply: the caller waits for it (a call without one sends turn_done at once)
    let replied = await read((m) => m.type === "turn_done", replyTimeoutMs);
    if (replied) await replyEnded(0);
    while (replied && performance.now() < deadline) {
      const step = await options.nextStep(conversation());
      if ("endCall" in step) break;
      if ("silenceMs" in step) {
        await read(() => false, step.silenceMs);
        if (ended()) break;
        continue;
      }
      outcome.utterances.push({ by: "caller", text: step.say });
      outcome.turns++;
      const from = outcome.utterances.length;
      await speak(step.say);
      replied = await read((m) => m.type === "turn_done", replyTimeoutMs);
      if (replied) await replyEnded(from);
      if (!replied && !closed && performance.now() < deadline)
        throw new Error(`the agent did not finish its reply within ${replyTimeoutMs} ms`);
    }
    if (!closed) socket.send(JSON.stringify({ type: "hangup" }));
    await read((m) => m.type === "ended", 10_000);
  } catch (error) {
    outcome.error = (error as Error).message;
  } finally {
    line?.stop();
    ear?.close();
    if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) socket.terminate();
    outcome.durationMs = Math.round(performance.now() - started);
  }
  return outcome;
}
