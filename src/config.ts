// The only module that reads the environment: everything else receives a Config.
import { hostname } from "node:os";

type Env = Record<string, string | undefined>;

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

function bridgeConfig(env: Env) {
  const port = int(env, "BRIDGE_PORT", 3001);
  return {
    port,
    sipPort: int(env, "SIP_PORT", 5060),
    rtpPortMin: int(env, "RTP_PORT_MIN", 20000),
    rtpPortMax: int(env, "RTP_PORT_MAX", 20999),
    // stable across restarts, so a restarted bridge finds (and closes) the calls it left open
    instanceId: str(env, "BRIDGE_INSTANCE_ID", `${hostname()}:${port}`),
    maxCallMs: int(env, "MAX_CALL_MS", 30 * 60_000),
    toolTimeoutMs: int(env, "TOOL_TIMEOUT_MS", 10_000),
  };
}

export function loadConfig(env: Env = process.env) {
  return {
      port: int(env, "PORT", 3000),
      databaseUrl: str(env, "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/voice_assistant"),
      adminToken: env.ADMIN_TOKEN || null,
      encryptionKey: parseKey(env.ENCRYPTION_KEY),
      temporal: {
        address: str(env, "TEMPORAL_ADDRESS", "127.0.0.1:7233"),
        namespace: str(env, "TEMPORAL_NAMESPACE", "default"),
        taskQueue: str(env, "HOOK_TASK_QUEUE", "hook-delivery-v1"),
      },
      hooks: {
        backoffBaseMs: int(env, "HOOK_BACKOFF_BASE_MS", 60_000),
        timeoutMs: int(env, "HOOK_TIMEOUT_MS", 30_000),
      },
      bridge: bridgeConfig(env),
      voice: {
        openaiApiKey: env.OPENAI_API_KEY || null,
        realtimeUrl: str(env, "OPENAI_REALTIME_URL", "wss://api.openai.com/v1/realtime"),
        baseUrl: str(env, "OPENAI_BASE_URL", "https://api.openai.com/v1"),
        summaryModel: str(env, "SUMMARY_MODEL", "gpt-4o-mini"),
      },
      logLevel: str(env, "LOG_LEVEL", "info"),
    };
}

export type Config = ReturnType<typeof loadConfig>;
