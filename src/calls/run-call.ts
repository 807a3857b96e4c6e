// Runs one call end to end: the agent task, the voice session, the conversation, then the summary and
// call_concluded. Wire formats hand it a CallerTransport and feed it the caller's side.
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { Config } from "../config";
import type { DatabaseAvailability } from "../db/availability";
import type { CallDirection } from "../db/schema";
import type { Db } from "../db/client";
import { describeError } from "../errors";
import { log } from "../log";
import { createOutboundGuard } from "../net/outbound-guard";
import { recordCallActive, recordCallDuration, startCallSetup } from "../metrics/metrics";
import { summarizeCall } from "../voice/summarize";
import { analysisPlanOf, type AnalysisPlan } from "../voice/call-analysis";
import { turnTakingOf } from "../voice/turn-taking/turn-taking";
import { knowledgeSearchFor } from "../services/knowledge/knowledge-search";
import type { CallConcludedPayload } from "../events/payloads";
import { CallMessages } from "./call-messages";
import { CallSession, type CallOutcome } from "./call-session";
import { activateCallTask, bareConcludedEvent, markCallStarted, openCallTask, type CallTask } from "./call-lifecycle";
import { ConclusionSpool } from "./conclusion-spool";
import { startBudget, type StartBudget } from "./start-budget";
import { isDatabaseUnavailable } from "../db/unavailable";
import { ConclusionWriter, objectStoreOf, recordingDirOf, spoolDirOf } from "./conclusion-writer";
import { failedReasons, type CallerTransport, type CallHandle } from "./caller-transport";
import { endedReasonOf } from "./ended-reason";
import { GreetOnSilence } from "./greet-on-silence";
import { VoicemailScreen, type VoicemailSetting } from "./voicemail-screen";
import { runningCalls } from "./running-calls";
import { callVariables, renderTemplate } from "./templates";
import type { FrameTicker } from "./frame-ticker";
import { testToolRunner, type TestCallSetup } from "./test-call-tools";
import { loadCallAssistant, type CallAssistant } from "./load-assistant";
import { openAssistantVoice } from "./assistant-voice";
import type { ConnectAssistant } from "./handoff";

export type CallDeps = {
  db: Db;
  /** whether `db` reaches Postgres: a call's start is refused for now when it does not */
  availability: DatabaseAvailability;
  config: Config;
  ticker?: FrameTicker;
  /** writes each call's end until it lands; by default one per database handle, spooling under the config's data dir */
  conclusions?: ConclusionWriter;
};

export type CallStart = {
  /** the call's task already exists as `offered` under this callId (SIP reserves it before answering) */
  reservedCallId?: string;
  /** the callId a call_context POST already named (the task is opened under it) */
  callId?: string;
  direction?: CallDirection;
  /** the call's own variables for its templates (the built-ins are added) */
  variables?: Record<string, string>;
  /** from the answer; default MAX_CALL_MS */
  maxCallMs?: number;
  /** outbound: the callee speaks first, or the assistant greets after this much silence */
  greetAfterSilenceMs?: number;
  /** outbound: what to do when an answering machine answers (screened from the first seconds) */
  voicemail?: VoicemailSetting;
  /** outbound: the INVITE's final response (200) */
  sipStatus?: number;
  /** what is left of the time the caller may wait to learn whether the call is served */
  budget?: StartBudget;
  /** text: the native protocol's text modality (no audio either way) */
  modality?: "audio" | "text";
  /** a test run's call: its result, variables, tool mocks and time limit */
  test?: TestCallSetup;
};

export function startCall(
  deps: CallDeps,
  assistant: CallAssistant,
  transport: CallerTransport,
  start: CallStart = {},
): CallHandle {
  const { config } = deps;
  const callId = start.reservedCallId ?? start.callId ?? randomUUID();
  const direction = start.direction ?? "inbound";
  const { calledNumber, callingNumber } = transport.descriptor;
  const variables = callVariables(
    { ...start.test?.variables, ...start.variables },
    {
      callerNumber: callingNumber ?? null,
      calledNumber: calledNumber ?? null,
      callId,
      direction,
      now: Date.now(),
    },
  );
  const task: CallTask = {
    callId,
    organizationId: assistant.organizationId,
    assistantId: assistant.id,
    transport: transport.descriptor,
    bridgeId: config.bridge.instanceId,
    direction,
    variables,
    ...(start.test && { testRunId: start.test.runId, testResultId: start.test.resultId }),
  };
  const turnTaking = turnTakingOf(assistant.extensions, assistant.strategy);
  const modality = start.modality ?? "audio";
  const session = new CallSession({
    callId: task.callId,
    transport,
    tools: [], // the assistant's, once its voice is connected
    toolTimeoutMs: config.bridge.toolTimeoutMs,
    knowledgeTimeoutMs: config.bridge.knowledgeTimeoutMs,
    knowledgeSearch: (id, query, max) => knowledgeSearchFor(deps.db, config.knowledge).search(id, query, max),
    toolGuard: createOutboundGuard(config.outbound),
    variables,
    maxCallMs: start.test?.maxCallMs ?? start.maxCallMs ?? config.bridge.maxCallMs,
    recording: { dir: recordingDir(config), ...config.bridge.recording },
    ticker: deps.ticker,
    modality: start.modality,
    turnTaking,
    runTool: start.test && testToolRunner(start.test),
    summarize: async (transcript) =>
      (await summarizeCall({ transcript, config, timeoutMs: config.voice.analysisTimeoutMs })).shortSummary,
    handoff: {
      entryAssistantId: assistant.kind === "assistant" ? assistant.id : null,
      connect: connectDestination(deps, task, transport.sampleRate, modality),
    },
  });
  const setupDone = startCallSetup(task.transport.type);
  log.info("call", {
    callId: task.callId,
    event: "accepted",
    organizationId: task.organizationId,
    assistantId: assistant.id,
    kind: assistant.kind,
    transport: task.transport.type,
    sampleRate: transport.sampleRate,
  });
  const opening =
    start.greetAfterSilenceMs === undefined
      ? null
      : new GreetOnSilence(transport.sampleRate, start.greetAfterSilenceMs);
  const message = start.voicemail?.message;
  const voicemail =
    start.voicemail && message ? { ...start.voicemail, message: renderTemplate(message, variables) } : start.voicemail;
  const screen = VoicemailScreen.of(voicemail, transport.sampleRate, session, callId);
  const done = runCall(deps, {
    assistant,
    task,
    session,
    transport,
    sampleRate: transport.sampleRate,
    setupDone,
    reserved: start.reservedCallId !== undefined,
    modality,
    sipStatus: start.sipStatus ?? null,
    opening,
    screen,
    budget: start.budget ?? startBudget(deps.availability),
  });
  void session.ended.then(() => opening?.stop());

  recordCallActive(task.transport.type, done);
  const handle: CallHandle = {
    callId: task.callId,
    callerAudio: (samples, ulaw) => {
      opening?.feed(samples);
      screen?.feed(samples);
      session.callerAudio(samples, ulaw);
    },
    callerHangup: () => session.end("caller-hangup"),
    callerDtmf: (digits) => session.callerDtmf(digits),
    callerText: (text) => session.callerText(text),
    end: (reason, error) => session.end(reason, error ?? null),
    done,
  };
  runningCalls.add(handle);
  return handle;
}

type RunningCall = {
  assistant: CallAssistant;
  task: CallTask;
  session: CallSession;
  transport: CallerTransport;
  sampleRate: number;
  /** stops the call-setup timer (accepted -> voice ready) */
  setupDone: () => void;
  reserved: boolean;
  budget: StartBudget;
  sipStatus: number | null;
  /** outbound: the greeting waits for the callee's first words or their silence (null: greet at once) */
  opening: GreetOnSilence | null;
  modality: "audio" | "text";
  /** outbound with voicemail screening: the voice hears and says nothing until the callee is a person */
  screen: VoicemailScreen | null;
};

/**
 * The call's writes, one after the other: its task, call_started once audio flows, then (after the
 * summary) the conclusion, which is written until it lands. The voice connects alongside.
 */
async function runCall(deps: CallDeps, call: RunningCall) {
  const { task, session } = call;
  const { db, config } = deps;
  try {
    const recorded = call.reserved
      ? activateCallTask(db, task.callId, task.variables, call.sipStatus)
      : openCallTask(db, task);
    await call.budget.bound(recorded, "recording the call");
    void connectVoice(deps, call);
  } catch (error) {
    // a write that lands after the budget leaves a task row: the conclusion below closes it then
    const reason = isDatabaseUnavailable(error) ? "database-unavailable" : "bridge-error";
    session.end(reason, `the call could not be recorded: ${describeError(error)}`);
  }

  const startedAt = await session.started;
  if (startedAt !== null) {
    // not lost when this fails: the conclusion writes call_started first when it is still missing
    await markCallStarted(db, task, startedAt).catch((error) => recordFailed(task, "call_started", error));
  }

  const outcome = await session.ended;
  const status = failedReasons.has(outcome.reason) ? "failed" : "completed";
  recordCallDuration(task.transport.type, status, outcome.startedAt, outcome.endedAt);
  const writer = conclusionWriterOf(deps);
  // s3: the recording's upload runs beside the summary; call_concluded waits for it no longer than it
  // may wait for the summary (ANALYSIS_TIMEOUT_MS from now), and goes without it after that
  const { recording, upload } = await writer.beginUpload(task, outcome.recording, config.voice.analysisTimeoutMs);
  const event = await concludedEvent(config, task, outcome, analysisPlanOf(call.assistant.extensions));
  const landed = await writer.conclude(
    {
      task,
      startedAt: outcome.startedAt,
      conclusion: {
        status,
        error: outcome.error,
        event,
        latency: outcome.latency,
        handoffs: outcome.handoffs.map((h) => ({ ...h, at: new Date(h.at).toISOString() })),
      },
      recording,
    },
    upload,
  );
  const caller = call.transport.mediaQuality?.();
  log.info("call", {
    callId: task.callId,
    event: "concluded",
    status,
    messages: event.messages.length,
    summarized: event.summary !== null,
    landed,
    ...(caller !== undefined && { caller }),
  });
}

/** Connects the voice provider and hands it to the session; a failure ends the call as voice-unavailable. */
async function connectVoice(deps: CallDeps, call: RunningCall) {
  const { assistant, session, sampleRate, setupDone, opening, screen, task } = call;
  try {
    const {
      voice: provider,
      tools,
      greeting,
    } = await openAssistantVoice(deps, assistant, {
      variables: task.variables,
      sampleRate,
      modality: call.modality,
      greetAtOnce: true,
      greetingWaitsForCallee: opening !== null,
    });
    setupDone();
    const voice = screen ? screen.gate(provider) : provider;
    session.attachVoice(voice, tools);
    if (!greeting && !opening) session.callerTurnFirst();
    // the callee's first words get the greeting from the voice itself; silence gets it from here
    if (opening && greeting) opening.ready(() => voice.greetIfWaiting());
  } catch (error) {
    session.end("voice-unavailable", (error as Error).message);
  }
}

/** How a handoff's destination is connected: an assistant of the call's organization, with the call's variables. */
function connectDestination(
  deps: CallDeps,
  task: CallTask,
  sampleRate: number,
  modality: "audio" | "text",
): ConnectAssistant {
  return async (assistantId, context) => {
    const destination = await loadCallAssistant(deps.db, "assistant", assistantId);
    // checked when the handoff was saved; the assistant may have gone since
    if (destination?.organizationId !== task.organizationId) throw new Error("the assistant no longer exists");
    const opened = await openAssistantVoice(deps, destination, {
      variables: task.variables,
      sampleRate,
      modality,
      greetAtOnce: false,
      context,
    });
    return { assistantId, ...opened };
  };
}

/** call_concluded without its recording: the writer adds it off the event loop. */
async function concludedEvent(
  config: Config,
  task: CallTask,
  outcome: CallOutcome,
  analysisPlan: AnalysisPlan | null,
): Promise<CallConcludedPayload> {
  const { shortSummary, summary, analysis } = await summarizeCall({
    transcript: CallMessages.transcriptOf(outcome.messages),
    config,
    analysis: analysisPlan,
    timeoutMs: config.voice.analysisTimeoutMs,
  });
  return {
    ...bareConcludedEvent(task, outcome.startedAt, endedReasonOf(outcome.reason), outcome.endedAt),
    transferredTo: outcome.transferredTo,
    shortSummary,
    summary,
    analysis: analysis ?? null,
    latency: outcome.latency?.voiceToVoiceMs ? { voiceToVoiceMs: outcome.latency.voiceToVoiceMs } : null,
    ...(outcome.handoffs.length > 0 && { handoffs: outcome.handoffs }),
    messages: outcome.messages,
  };
}

/** The folder of this instance's recordings, made once per process. */
const recordingDir = (config: Config) => {
  const dir = recordingDirOf(config);
  if (!madeDirs.has(dir)) mkdirSync(dir, { recursive: true });
  madeDirs.add(dir);
  return dir;
};
const madeDirs = new Set<string>();

const writers = new WeakMap<Db, ConclusionWriter>();

/** The writer of a call's end: the deps' own, or one per database handle spooling under the config's data dir. */
export function conclusionWriterOf({ db, config, conclusions }: CallDeps) {
  if (conclusions) return conclusions;
  const writer =
    writers.get(db) ??
    new ConclusionWriter(db, config.databaseUrl, new ConclusionSpool(spoolDirOf(config)), {
      objectStore: objectStoreOf(config),
    });
  writers.set(db, writer);
  return writer;
}

function recordFailed(task: CallTask, what: string, error: unknown) {
  log.error("call record failed", { callId: task.callId, what, error: describeError(error) });
}
