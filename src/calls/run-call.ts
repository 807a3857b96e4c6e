// Runs one call end to end: the agent task, the voice session, the conversation, then the summary and
// call_concluded. Wire formats hand it a CallerTransport and feed it the caller's side.
import { randomUUID } from "node:crypto";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { describeError } from "../errors";
import { log } from "../log";
import { recordCallActive, recordCallDuration, startCallSetup } from "../metrics/metrics";
import { createOutboundGuard } from "../net/outbound-guard";
import { createVoiceSession } from "../voice/create-voice-session";
import { summarizeCall } from "../voice/summarize";
import { toolWebhooksFromExtensions, type ToolWebhook } from "../voice/tools";
import { CallMessages } from "./call-messages";
import { CallSession, type CallOutcome } from "./call-session";
import { activateCallTask, concludeCallTask, markCallStarted, openCallTask, type CallTask } from "./call-lifecycle";
import { failedReasons, type CallerTransport, type CallHandle } from "./caller-transport";
import type { FrameTicker } from "./frame-ticker";
import type { CallAssistant } from "./load-assistant";

export type CallDeps = { db: Db; config: Config; ticker?: FrameTicker };

/** `reserved`: the call's task already exists as `offered` (SIP reserves it before answering). */
export function startCall(deps: CallDeps, assistant: CallAssistant, transport: CallerTransport, reserved?: { callId: string }): CallHandle {
  const { db, config } = deps;
  const task: CallTask = {
    callId: reserved?.callId ?? randomUUID(),
    organizationId: assistant.organizationId,
    assistantId: assistant.id,
    transport: transport.descriptor,
    bridgeId: config.bridge.instanceId,
  };
  const tools = toolWebhooksFromExtensions(assistant.extensions);
  // task writes run in order: call_started is never written after (or instead of) the conclusion
  let records: Promise<unknown> = reserved ? activateCallTask(db, task.callId) : openCallTask(db, task);
  const session = new CallSession({
    callId: task.callId,
    transport,
    tools,
    toolTimeoutMs: config.bridge.toolTimeoutMs,
    toolGuard: createOutboundGuard(config.outbound),
    maxCallMs: config.bridge.maxCallMs,
    ticker: deps.ticker,
    onStarted: (startedAt) => {
      records = records.then(() => markCallStarted(db, task, startedAt)).catch((error) => recordFailed(task, "call_started", error));
    },
  });
  const setupDone = startCallSetup(task.transport.type);
  log.info("call", { callId: task.callId, event: "accepted", organizationId: task.organizationId, assistantId: assistant.id, kind: assistant.kind, transport: task.transport.type, sampleRate: transport.sampleRate });

  records.then(
    () => connectVoice(deps, assistant, tools, transport.sampleRate).then((voice) => (setupDone(), session.attachVoice(voice))),
    (error) => session.end("bridge-error", `the call could not be recorded: ${describeError(error)}`),
  ).catch((error: Error) => session.end("voice-unavailable", error.message));

  const done = session.ended.then(async (outcome) => {
    const event = await concludedEvent(config, task, outcome);
    await records.catch(() => {});
    const status = failedReasons.has(outcome.reason) ? "failed" : "completed";
    recordCallDuration(task.transport.type, status, outcome.startedAt, outcome.endedAt);
    await concludeCallTask(db, task, { status, error: outcome.error, event }).catch((error) => recordFailed(task, "call_concluded", error));
    log.info("call", { callId: task.callId, event: "concluded", status, messages: event.messages.length, summarized: event.summary !== null });
  });

  recordCallActive(task.transport.type, done);
  return {
    callId: task.callId,
    callerAudio: (samples) => session.callerAudio(samples),
    callerHangup: () => session.end("caller-hangup"),
    callerDtmf: (digits) => session.callerDtmf(digits),
    end: (reason) => session.end(reason),
    done,
  };
}

function connectVoice(deps: CallDeps, assistant: CallAssistant, tools: ToolWebhook[], sampleRate: number) {
  if (!assistant.strategy) throw new Error(`the ${assistant.kind} has no LLM generation strategy`);
  return createVoiceSession(assistant.strategy, {
    instructions: assistant.systemPrompt ?? "",
    greeting: assistant.greeting,
    tools: tools.map((w) => w.tool),
    sampleRate,
    config: deps.config,
  });
}

async function concludedEvent(config: Config, task: CallTask, outcome: CallOutcome) {
  const { shortSummary, summary } = await summarizeCall({ transcript: CallMessages.transcriptOf(outcome.messages), config });
  return {
    type: "call_concluded" as const,
    callId: task.callId,
    startedAt: outcome.startedAt,
    endedAt: outcome.endedAt,
    shortSummary,
    summary,
    callRecording: outcome.recording?.toString("base64") ?? null,
    transport: task.transport,
    messages: outcome.messages,
  };
}

function recordFailed(task: CallTask, what: string, error: unknown) {
  log.error("call record failed", { callId: task.callId, what, error: describeError(error) });
}
