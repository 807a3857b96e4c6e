// The only module that reads the environment: everything else receives a Config.
import { availableParallelism, hostname, networkInterfaces } from "node:os";
import { parseAllowCidrs } from "./net/outbound-guard";

type Env = Record<string, string | undefined>;

const DEFAULT_BRIDGE_PORT = 3001;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === "" ? fallback : raw;
}

function parseKey(raw: string | undefined): Buffer | null {
  if (!raw) return null;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, "hex") : Buffer.from(raw, "base64");
  if (key.length !== 32) throw new Error("ENCRYPTION_KEY must be 32 bytes, hex or base64");
  return key;
}

function sipConfig(env: Env) {
  const transport = str(env, "SIP_TRANSPORT", "udp").toUpperCase();
  if (transport !== "UDP" && transport !== "TCP")
    throw new Error(`SIP_TRANSPORT must be udp or tcp, got "${transport}"`);
  return {
    enabled: str(env, "SIP_ENABLED", "true") !== "false",
    port: int(env, "SIP_PORT", 5060),
    bindHost: str(env, "SIP_BIND_HOST", "0.0.0.0"),
    // the address peers reach us at, written into Via, Contact and SDP
    publicHost: str(env, "SIP_PUBLIC_HOST", firstIpv4()),
    transport: transport as "UDP" | "TCP",
    registerExpiresSeconds: int(env, "SIP_REGISTER_EXPIRES", 300),
    retryBaseMs: int(env, "SIP_REGISTER_RETRY_MS", 2_000),
    retryMaxMs: int(env, "SIP_REGISTER_RETRY_MAX_MS", 60_000),
    // a bridge that stops renewing loses its credentials to another bridge after this long
    leaseMs: int(env, "SIP_LEASE_MS", 10_000),
  };
}

function firstIpv4(): string {
  const addresses = Object.values(networkInterfaces()).flat();
  return addresses.find((a) => a && a.family === "IPv4" && !a.internal)?.address ?? "127.0.0.1";
}

function recordingConfig(env: Env) {
  const format = str(env, "RECORDING_FORMAT", "ulaw");
  if (format !== "ulaw" && format !== "pcm16")
    throw new Error(`RECORDING_FORMAT must be ulaw or pcm16, got "${format}"`);
  return {
    // ulaw: G.711 mu-law WAV at 8 kHz (8 KB/s); pcm16: PCM16 WAV at the call's rate (16-48 KB/s)
    format: format as "ulaw" | "pcm16",
    // audio bytes kept per call; a longer call's recording holds its start and is marked truncated
    maxBytes: int(env, "RECORDING_MAX_BYTES", 16 * 1024 * 1024),
  };
}

/** Where finished calls' recordings are kept (design.md, "Recordings in object storage"). */
function recordingStoreConfig(env: Env) {
  const store = str(env, "RECORDING_STORE", "postgres");
  if (store !== "postgres" && store !== "s3") throw new Error(`RECORDING_STORE must be postgres or s3, got "${store}"`);
  const bucket = env.S3_BUCKET || null;
  const accessKeyId = env.S3_ACCESS_KEY_ID || null;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || null;
  if (store === "s3" && !(bucket && accessKeyId && secretAccessKey))
    throw new Error("RECORDING_STORE=s3 needs S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY");
  return {
    // where new recordings go; objects written before stay readable while the S3_* settings are there
    kind: store as "postgres" | "s3",
    s3:
      bucket && accessKeyId && secretAccessKey
        ? {
            // unset: AWS S3 of the region
            endpoint: env.S3_ENDPOINT || null,
            region: str(env, "S3_REGION", "us-east-1"),
            bucket,
            accessKeyId,
            secretAccessKey,
            prefix: str(env, "S3_PREFIX", "recordings/"),
          }
        : null,
    // the API's presigned URL lives this long, the hook's twelve times as long (it may be retried for a while)
    urlTtlSeconds: Math.max(1, int(env, "RECORDING_URL_TTL_SECONDS", 300)),
    // false: call_concluded carries recordingUrl alone, not the base64 audio (s3 only)
    inHooks: str(env, "RECORDING_IN_HOOKS", "true") !== "false",
  };
}

/**
 * The ports of the local S3 server (SeaweedFS) that `make start` runs for RECORDING_STORE=s3 without
 * S3_ENDPOINT (src/start.ts; src/local-secrets.ts points S3_ENDPOINT at its S3 port). weed puts each
 * one's gRPC port 10000 above it, so each stays below 55536.
 */
export function localS3Ports(env: Env = process.env) {
  const port = (name: string, fallback: number) => {
    const n = int(env, name, fallback);
    if (n < 1 || n > 55535) throw new Error(`${name} must be 1 to 55535 (its gRPC port is 10000 above it), got ${n}`);
    return n;
  };
  return {
    s3: port("LOCAL_S3_PORT", 8333),
    master: port("LOCAL_S3_MASTER_PORT", 9333),
    volume: port("LOCAL_S3_VOLUME_PORT", 9340),
    filer: port("LOCAL_S3_FILER_PORT", 8888),
  };
}

function bridgeConfig(env: Env) {
  const port = int(env, "BRIDGE_PORT", DEFAULT_BRIDGE_PORT);
  return {
    port,
    sip: sipConfig(env),
    // shared by every bridge worker on the machine (a port is whoever binds it first): 5,000 calls
    rtpPortMin: int(env, "RTP_PORT_MIN", 20000),
    rtpPortMax: int(env, "RTP_PORT_MAX", 29999),
    // the caller's RTP stopped (outside hold) for this long: the call is over
    rtpTimeoutMs: int(env, "RTP_TIMEOUT_MS", 15_000),
    // SIP calls' RTP on a thread of its own per bridge process (false: in the event loop of SIP and calls)
    mediaThread: str(env, "BRIDGE_MEDIA_THREAD", "true") !== "false",
    // websocket calls' sockets and frame pacing on a thread of their own (false: in the calls' event
    // loop, which then paces every call's frames between its other work; docs/bridge.md#websocket-thread)
    wsThread: str(env, "BRIDGE_WS_THREAD", "true") !== "false",
    // agent frames go to the media (or websocket) thread this far ahead of their play time: stalls of the event loop
    // shorter than this are not heard (the frames wait on the thread instead of in the call)
    mediaLeadMs: int(env, "BRIDGE_MEDIA_LEAD_MS", 200),
    // stable across restarts, so a restarted bridge finds (and closes) the calls it left open
    instanceId: str(env, "BRIDGE_INSTANCE_ID", `${hostname()}:${port}`),
    maxCallMs: int(env, "MAX_CALL_MS", 30 * 60_000),
    toolTimeoutMs: int(env, "TOOL_TIMEOUT_MS", 10_000),
    // a knowledge_base tool's search (the customer's service or ours): the caller is waiting
    knowledgeTimeoutMs: int(env, "KNOWLEDGE_TIMEOUT_MS", 3_000),
    // call ends not yet written (spool/<instance>) and recordings of calls in progress live under it
    dataDir: str(env, "BRIDGE_DATA_DIR", ".data/bridge"),
    // every bridge beats this often; one silent for heartbeatTtlMs is lost and its calls are concluded
    heartbeatMs: int(env, "BRIDGE_HEARTBEAT_MS", 2_000),
    heartbeatTtlMs: int(env, "BRIDGE_HEARTBEAT_TTL_MS", 10_000),
    recording: recordingConfig(env),
    // Twilio's REST API, for transfers of Media Streams calls (call update with <Dial>); without the
    // account the transfer tool answers that transfer is unavailable
    twilio: {
      apiUrl: str(env, "TWILIO_API_URL", "https://api.twilio.com"),
      accountSid: str(env, "TWILIO_ACCOUNT_SID", ""),
      authToken: str(env, "TWILIO_AUTH_TOKEN", ""),
    },
    // worker processes `start:bridge` runs (one event loop per core); 1 runs the bridge in the process itself
    workers: Math.max(1, int(env, "BRIDGE_WORKERS", availableParallelism())),
    // set by the supervisor in each worker it starts: which one this is (src/bridge/supervisor.ts)
    workerIndex: env.BRIDGE_WORKER_INDEX ? int(env, "BRIDGE_WORKER_INDEX", 0) : null,
  };
}

/**
 * The environment of bridge worker `index` of `workers`: its own instance id and SIP port; the websocket
 * port is shared (SO_REUSEPORT), and so is the RTP range (not sliced: the worker holding a busy
 * credential's lease takes every call of it, and may need most of the range).
 */
export function bridgeWorkerEnv(config: Config, index: number, env: Env = process.env): Record<string, string> {
  const { bridge } = config;
  const base = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  return {
    ...base,
    BRIDGE_WORKER_INDEX: String(index),
    BRIDGE_INSTANCE_ID: `${bridge.instanceId}#${index}`,
    SIP_PORT: String(bridge.sip.port === 0 ? 0 : bridge.sip.port + index),
  };
}

/**
 * API_CHECK_RESPONSES=true: every answer is also checked against its response schema at run time (the
 * test suite turns it on). Read where the schemas are built (src/models/common.ts), before any Config.
 */
export const checksResponses = (env: Env = process.env) => str(env, "API_CHECK_RESPONSES", "false") === "true";

export function loadConfig(env: Env = process.env) {
  return {
    port: int(env, "PORT", 3000),
    databaseUrl: str(env, "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/voice_assistant"),
    // connecting and every statement; past it the database counts as away (503, calls refused or served from cache)
    databaseTimeoutMs: int(env, "DATABASE_TIMEOUT_MS", 5_000),
    // LISTEN needs a session of its own: behind a transaction pooler, a direct (or session-mode) URL
    databaseListenUrl: env.DATABASE_LISTEN_URL || null,
    // false: no named prepared statements, so that PgBouncer in transaction mode can sit in between
    databasePrepare: str(env, "DATABASE_PREPARE", "true") !== "false",
    // reads by id from memory, kept exact by LISTEN/NOTIFY (docs/architecture.md): the same in every process
    readModel: {
      enabled: str(env, "READ_MODEL", "true") !== "false",
      // a process whose LISTEN lags or broke stops trusting its memory after this; a write waits at most this long
      leaseMs: int(env, "READ_MODEL_LEASE_MS", 100),
    },
    adminToken: env.ADMIN_TOKEN || null,
    // per API process: N instances let a token make N times this (docs/operations.md)
    apiTokenRate: {
      perSecond: int(env, "API_TOKEN_RATE", 100),
      burst: int(env, "API_TOKEN_BURST", 2 * int(env, "API_TOKEN_RATE", 100)),
    },
    encryptionKey: parseKey(env.ENCRYPTION_KEY),
    temporal: {
      address: str(env, "TEMPORAL_ADDRESS", "127.0.0.1:7233"),
      namespace: str(env, "TEMPORAL_NAMESPACE", "default"),
      taskQueue: str(env, "HOOK_TASK_QUEUE", "hook-delivery-v2"),
      // test runs and campaigns on queues of their own, each with its own slots in the worker: a run's
      // calls (minutes each) and campaigns' steps never take what hook deliveries need
      testRunTaskQueue: str(env, "TEST_RUN_TASK_QUEUE", "test-runs"),
      campaignTaskQueue: str(env, "CAMPAIGN_TASK_QUEUE", "campaigns"),
      // a workflow task sent to a worker's own (sticky) queue that it has not taken this long goes to the
      // shared queue: what a killed worker's workflows wait before another worker picks them up (the SDK's 10 s)
      stickyQueueTimeoutMs: int(env, "TEMPORAL_STICKY_QUEUE_TIMEOUT_MS", 10_000),
      // Temporal Cloud (or any server behind TLS with API keys): the key implies TLS
      apiKey: env.TEMPORAL_API_KEY || null,
      tls: env.TEMPORAL_TLS === "true" || Boolean(env.TEMPORAL_API_KEY),
    },
    hooks: {
      backoffBaseMs: int(env, "HOOK_BACKOFF_BASE_MS", 60_000),
      timeoutMs: int(env, "HOOK_TIMEOUT_MS", 30_000),
      // how often the worker looks for PENDING deliveries whose workflow Temporal no longer knows
      reconcileIntervalMs: int(env, "HOOK_RECONCILE_INTERVAL_MS", 60_000),
    },
    testRuns: {
      // a test result's call whose worker stopped beating this long is placed again on a live worker
      heartbeatTimeoutMs: int(env, "TEST_RUN_HEARTBEAT_TIMEOUT_MS", 30_000),
      // test calls one worker process runs at once (each a result's activity); more wait in their queue
      workerSlots: Math.max(1, int(env, "TEST_RUN_WORKER_SLOTS", 50)),
    },
    campaigns: {
      // campaign steps one worker process runs at once (each a workflow task with its local activity)
      workerSlots: Math.max(1, int(env, "CAMPAIGN_WORKER_SLOTS", 20)),
    },
    bridge: bridgeConfig(env),
    // hybrid knowledge search (docs/knowledge.md): an OpenAI-compatible /embeddings endpoint
    knowledge: {
      embeddingsUrl: env.EMBEDDINGS_URL || null,
      embeddingsModel: str(env, "EMBEDDINGS_MODEL", "text-embedding-3-small"),
      embeddingsApiKey: env.EMBEDDINGS_API_KEY || null,
      // a question's embedding: slower than this and the search answers with full-text results alone
      embeddingsTimeoutMs: int(env, "EMBEDDINGS_TIMEOUT_MS", 1_500),
    },
    voice: {
      openaiApiKey: env.OPENAI_API_KEY || null,
      realtimeUrl: str(env, "OPENAI_REALTIME_URL", "wss://api.openai.com/v1/realtime"),
      // caller audio goes to the Realtime provider in chunks this long (0: every frame as it comes)
      realtimeInputChunkMs: int(env, "REALTIME_INPUT_CHUNK_MS", 100),
      baseUrl: str(env, "OPENAI_BASE_URL", "https://api.openai.com/v1"),
      summaryModel: str(env, "SUMMARY_MODEL", "gpt-4o-mini"),
      // the post-call summary and analysis request, retry included: call_concluded waits no longer
      analysisTimeoutMs: int(env, "ANALYSIS_TIMEOUT_MS", 20_000),
      // the pipeline engine's providers: the operator's endpoints and keys, never a tenant's
      deepgramUrl: str(env, "DEEPGRAM_URL", "wss://api.deepgram.com/v1/listen"),
      deepgramApiKey: env.DEEPGRAM_API_KEY || null,
      elevenlabsUrl: str(env, "ELEVENLABS_URL", "wss://api.elevenlabs.io"),
      elevenlabsApiKey: env.ELEVENLABS_API_KEY || null,
      pipelineLlmModel: str(env, "PIPELINE_LLM_MODEL", "gpt-4o-mini"),
      // an LLM or TTS provider silent this long in the middle of an answer fails the call
      providerStallMs: int(env, "PROVIDER_STALL_MS", 15_000),
    },
    // ranges tenants' hook, tool and SIP destinations may reach although private (see src/net/outbound-guard.ts)
    outbound: { allowCidrs: parseAllowCidrs(env.OUTBOUND_ALLOW_CIDRS ?? "") },
    // GET /metrics of the hook worker (the API and the bridge serve it on their own ports)
    workerMetricsPort: int(env, "WORKER_METRICS_PORT", 9464),
    metrics: {
      // the bearer /metrics wants on the API and bridge ports (the API port serves none without it)
      token: env.METRICS_TOKEN || null,
      // the API's metrics on a port of their own, without a token (an internal address)
      port: env.METRICS_PORT ? int(env, "METRICS_PORT", 0) : null,
      // ids of tenants' resources (SIP credentials) as label values: off unless asked for
      tenantLabels: env.METRICS_TENANT_LABELS === "true",
    },
    // how long a finished call's recording and messages stay readable through the API
    recordingRetentionDays: int(env, "RECORDING_RETENTION_DAYS", 30),
    recordingStore: recordingStoreConfig(env),
    // testing an assistant (docs/testing-assistants.md): where the worker places test calls, and its models
    testing: {
      bridgeUrl: str(env, "BRIDGE_URL", `ws://127.0.0.1:${int(env, "BRIDGE_PORT", DEFAULT_BRIDGE_PORT)}`),
      simulatorModel: str(env, "SIMULATOR_MODEL", "gpt-4o-mini"),
      judgeModel: str(env, "JUDGE_MODEL", "gpt-4o-mini"),
    },
    // the bridge's websocket URL as browsers reach it, for the console's Talk page (else derived from the page's host)
    consoleBridgeUrl: env.CONSOLE_BRIDGE_URL || null,
    logLevel: str(env, "LOG_LEVEL", "info"),
  };
}

export type Config = ReturnType<typeof loadConfig>;
