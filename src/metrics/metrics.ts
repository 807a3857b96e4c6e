// Every Prometheus metric of the service, in one registry per process (the API, the bridge and the
// worker each serve theirs at GET /metrics). Call sites use the small record* helpers below, one line
// each, so instrumentation never spreads prom-client through the other areas.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "vas_" });
// Bun answers v8.getHeapSpaceStatistics by walking the heap: 20-30 ms on the event loop that paces
// every call's audio, at every scrape. The heap totals (process.memoryUsage) stay, they are cheap.
for (const kind of ["total", "used", "available"])
  registry.removeSingleMetric(`vas_nodejs_heap_space_size_${kind}_bytes`);

// latency buckets in seconds: from sub-millisecond API reads to multi-second provider handshakes
const fast = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const slow = [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30];

// (registered only: their collect hooks below fill them at scrape time)
new Counter({
  name: "vas_http_requests_total",
  help: "API requests by route pattern, method and status",
  labelNames: ["method", "route", "status"] as const,
  registers: [registry],
  collect: collectHttpRequests,
});
const httpDuration = new Histogram({
  name: "vas_http_request_duration_seconds",
  help: "API request duration by route pattern and method",
  labelNames: ["method", "route"] as const,
  buckets: fast,
  registers: [registry],
});

new Counter({
  name: "vas_read_model_reads_total",
  help: "reads through the read model, by where they were answered from (memory, database)",
  labelNames: ["source"] as const,
  registers: [registry],
  collect: collectReadModelReads,
});

const callsActive = new Gauge({
  name: "vas_calls_active",
  help: "calls in progress on this bridge, by transport (websocket, sip)",
  labelNames: ["transport"] as const,
  registers: [registry],
});
const credentialCallsActive = new Gauge({
  name: "vas_sip_credential_calls_active",
  help: "SIP calls in progress on this bridge, by credential id",
  labelNames: ["credential"] as const,
  registers: [registry],
});
const callSetup = new Histogram({
  name: "vas_call_setup_seconds",
  help: "from a call's arrival at the bridge to the agent being ready (voice provider connected)",
  labelNames: ["transport"] as const,
  buckets: slow,
  registers: [registry],
});
const callDuration = new Histogram({
  name: "vas_call_duration_seconds",
  help: "duration of started calls, from the first audio to the end, by transport and final status",
  labelNames: ["transport", "status"] as const,
  buckets: [5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600],
  registers: [registry],
});
const voiceConnect = new Histogram({
  name: "vas_voice_provider_connect_seconds",
  help: "time to connect a call's voice provider session, by strategy type and outcome (ok, error)",
  labelNames: ["provider", "outcome"] as const,
  buckets: slow,
  registers: [registry],
});

const rtpJitter = new Histogram({
  name: "vas_rtp_jitter_seconds",
  help: "RFC 3550 interarrival jitter of the caller's RTP, per SIP call at its end",
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16],
  registers: [registry],
});
const rtpReceived = new Counter({
  name: "vas_rtp_packets_received_total",
  help: "RTP packets received from callers",
  registers: [registry],
});
const rtpLost = new Counter({
  name: "vas_rtp_packets_lost_total",
  help: "RTP packets of callers that never arrived or came too late to play",
  registers: [registry],
});
const pacingDelay = new Histogram({
  name: "vas_media_pacing_delay_seconds",
  help: "how much later than its 2 ms interval a media pacer ran, every run while calls play, by thread (main: agent frames, and RTP without the media thread; media: RTP on the media thread; ws: websocket agent frames on the websocket thread)",
  labelNames: ["thread"],
  buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25],
  registers: [registry],
});
const lateFrames = new Counter({
  name: "vas_media_late_frames_total",
  help: "agent audio frames handed to the caller's transport after the caller should have heard them (a gap in the agent's speech)",
  registers: [registry],
});

// latency per turn (design.md, "Latency per turn"): one histogram per stage, a sample per turn that has it
const turnBuckets = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
const turnStage = (name: string, help: string) =>
  new Histogram({ name: `vas_turn_${name}_seconds`, help, buckets: turnBuckets, registers: [registry] });
const turnStages = {
  endpointing: turnStage("endpointing", "from the end of the caller's speech to the turn being decided"),
  llmFirstToken: turnStage(
    "llm_first_token",
    "from the LLM request (Realtime: the response being requested) to its first token or audio",
  ),
  ttsFirstAudio: turnStage("tts_first_audio", "from the first text sent to TTS to its first audio (pipeline)"),
  voiceToVoice: turnStage(
    "voice_to_voice",
    "from the end of the caller's speech to the first frame of the reply sent to the caller",
  ),
};

const toolDuration = new Histogram({
  name: "vas_tool_webhook_duration_seconds",
  help: "tool webhook request duration, by outcome (ok, error)",
  labelNames: ["outcome"] as const,
  buckets: fast,
  registers: [registry],
});
const toolErrors = new Counter({
  name: "vas_tool_webhook_errors_total",
  help: "failed tool webhook calls, by reason (status, timeout, network, unknown_tool)",
  labelNames: ["reason"] as const,
  registers: [registry],
});

const callContextDuration = new Histogram({
  name: "vas_call_context_duration_seconds",
  help: "call_context request duration before an inbound call's greeting, by outcome (ok, rejected, failed)",
  labelNames: ["outcome"] as const,
  buckets: fast,
  registers: [registry],
});

const hookAttempts = new Histogram({
  name: "vas_hook_attempt_duration_seconds",
  help: "hook delivery attempt duration, by the delivery's state after it (SUCCEEDED, PENDING = will retry, FAILED)",
  labelNames: ["state"] as const,
  buckets: fast,
  registers: [registry],
});

export type HttpSample = { method: string; route: string; status: number; seconds: number };

// Per-request series (the API's requests, the read model's reads) are counted in plain numbers and handed
// to prom-client when scraped (its collect hook): prom-client hashes the label object at every inc, and
// with the label objects and keys that was 8 % of a cached read's CPU.
type RouteSeries = { duration: ReturnType<typeof httpDuration.labels>; pendingByStatus: Map<number, number> };
// by method, then route pattern (few: patterns, not paths)
const routeSeries = new Map<string, Map<string, RouteSeries>>();
const pendingReads = { memory: 0, database: 0 };

function collectHttpRequests(this: Counter<"method" | "route" | "status">) {
  for (const [method, routes] of routeSeries)
    for (const [route, { pendingByStatus }] of routes)
      for (const [status, n] of pendingByStatus) {
        if (n === 0) continue;
        this.inc({ method, route, status: String(status) }, n);
        pendingByStatus.set(status, 0);
      }
}

function collectReadModelReads(this: Counter<"source">) {
  for (const source of ["memory", "database"] as const) {
    if (pendingReads[source] > 0) this.inc({ source }, pendingReads[source]);
    pendingReads[source] = 0;
  }
}

function seriesOf(method: string, route: string): RouteSeries {
  const routes = routeSeries.get(method) ?? routeSeries.set(method, new Map()).get(method)!;
  const known = routes.get(route);
  if (known) return known;
  const series = { duration: httpDuration.labels(method, route), pendingByStatus: new Map<number, number>() };
  routes.set(route, series);
  return series;
}

export function recordHttpRequest({ method, route, status, seconds }: HttpSample) {
  const { duration, pendingByStatus } = seriesOf(method, route);
  pendingByStatus.set(status, (pendingByStatus.get(status) ?? 0) + 1);
  duration.observe(seconds);
}

export const recordReadModelRead = (source: "memory" | "database") => void pendingReads[source]++;

/** A call is in progress until `done` settles. */
export function recordCallActive(transport: string, done: Promise<unknown>) {
  callsActive.inc({ transport });
  void done.finally(() => callsActive.dec({ transport }));
}

let tenantLabels = false;
/** METRICS_TENANT_LABELS: whether tenants' resource ids (SIP credentials) may be label values. */
export const useTenantLabels = (on: boolean) => {
  tenantLabels = on;
};

/** A SIP call on `credential` is in progress until `done` settles (counted only with tenant labels on). */
export function recordCredentialCall(credential: string, done: Promise<unknown>) {
  if (!tenantLabels) return;
  credentialCallsActive.inc({ credential });
  void done.finally(() => credentialCallsActive.dec({ credential }));
}

/** Starts the call's setup clock; call the result once the agent is ready. */
export const startCallSetup = (transport: string) => callSetup.startTimer({ transport });

export function recordCallDuration(transport: string, status: string, startedAt: number | null, endedAt: number) {
  if (startedAt !== null) callDuration.observe({ transport, status }, (endedAt - startedAt) / 1000);
}

/** Times a voice provider connection; returns the same promise. */
export function timeVoiceConnect<T>(provider: string, connecting: Promise<T>): Promise<T> {
  const stop = voiceConnect.startTimer({ provider });
  connecting.then(
    () => stop({ outcome: "ok" }),
    () => stop({ outcome: "error" }),
  );
  return connecting;
}

export function recordRtpCall(stats: { jitterMs: number; received: number; lost: number }) {
  if (stats.received === 0) return;
  rtpJitter.observe(stats.jitterMs / 1000);
  rtpReceived.inc(stats.received);
  rtpLost.inc(stats.lost);
}

export type PacerThread = "main" | "media" | "ws";
export const recordPacingDelay = (ms: number, thread: PacerThread = "main") =>
  pacingDelay.observe({ thread }, ms / 1000);
export const recordLateFrames = (count: number) => lateFrames.inc(count);

export type TurnStage = keyof typeof turnStages;
export const recordTurnStage = (stage: TurnStage, ms: number) => turnStages[stage].observe(ms / 1000);

export type ToolSample = { ok: boolean; status: number | null; durationMs: number; error?: string };

export function recordToolWebhook(result: ToolSample) {
  toolDuration.observe({ outcome: result.ok ? "ok" : "error" }, result.durationMs / 1000);
  if (!result.ok)
    toolErrors.inc({
      reason: result.status !== null ? "status" : result.error?.startsWith("timed out") ? "timeout" : "network",
    });
}

export const recordCallContext = (outcome: "ok" | "rejected" | "failed", durationMs: number) =>
  callContextDuration.observe({ outcome }, durationMs / 1000);

export const recordUnknownTool = () => toolErrors.inc({ reason: "unknown_tool" });

export function recordHookAttempt(state: string, durationMs: number) {
  hookAttempts.observe({ state }, durationMs / 1000);
}

/** A gauge whose values are read when scraped (from the database, for instance). */
export function registerCollectedGauge<L extends string>(options: {
  name: string;
  help: string;
  labelNames: readonly L[];
  read(): Promise<{ labels: Record<L, string>; value: number }[]>;
}) {
  const { read, ...rest } = options;
  return new Gauge<L>({
    ...rest,
    registers: [registry],
    async collect() {
      this.reset();
      // the database away: the scrape still answers, without this gauge's series
      const rows = await read().catch(() => []);
      for (const { labels, value } of rows) this.set(labels, value);
    },
  });
}
