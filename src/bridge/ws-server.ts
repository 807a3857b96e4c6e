// The bridge's websocket server (Bun's native websockets): refuses bad requests with a JSON error
// before upgrading, then hands each connection to its wire format and the call it starts.
import type { ServerWebSocket } from "bun";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../config";
import { createDb } from "../db/client";
import { AppError, badRequest, describeError } from "../errors";
import { within } from "../lib/within";
import { log } from "../log";
import { answerMetricsCollection, bridgeMetricsResponse } from "../metrics/bridge-workers";
import { refuseMetrics } from "../metrics/access";
import { useTenantLabels } from "../metrics/metrics";
import { failure } from "../models/envelope";
import { createTokenResolver } from "../services/auth";
import type { CallHandle } from "../calls/caller-transport";
import type { CallAssistant } from "../calls/load-assistant";
import { BridgeReaper } from "../calls/bridge-reaper";
import { recoverOrphanedTasks } from "../calls/call-lifecycle";
import { hearHangups } from "../calls/running-calls";
import { ConclusionSpool } from "../calls/conclusion-spool";
import { ConclusionWriter, objectStoreOf, recordingDirOf, spoolDirOf } from "../calls/conclusion-writer";
import type { CallDeps } from "../calls/run-call";
import { startInboundCall } from "../calls/start-inbound-call";
import { startBudget, type StartBudget } from "../calls/start-budget";
import { isDatabaseUnavailable } from "../db/unavailable";
import { untilDatabase } from "../db/until-available";
import { authorizeCall } from "./authorize-call";
import { authorizeTestCall } from "./authorize-test-call";
import type { TestCallSetup } from "../calls/test-call-tools";
import { nativeProtocol, nativeSampleRates } from "./protocol-native";
import { twilioProtocol } from "./protocol-twilio";
import { tryAgainLater, type WireProtocol, type WireSocket } from "./wire-socket";
import { startWsThread, type HostedSockets, type UpgradeTarget } from "./ws-thread";

type Upgrade =
  | { route: "native"; assistant: CallAssistant; sampleRate: number; budget: StartBudget; test?: TestCallSetup }
  | { route: "twilio"; assistant: CallAssistant | null; source: string | null }
  /** upgraded only to be closed with 1013: the database is away, or this bridge is still starting */
  | { route: "refused" };
type Connection = Upgrade & { protocol?: WireProtocol };

const json = (status: number, message: string, retryAfterSec?: number) =>
  Response.json(failure(message), {
    status,
    headers: retryAfterSec === undefined ? {} : { "retry-after": String(retryAfterSec) },
  });

export type BridgeOptions = {
  port?: number;
  /** settles once the database is migrated: calls wait for it (refused meanwhile) */
  migrated?: Promise<unknown>;
};

export async function startBridge(config: Config, options: BridgeOptions = {}) {
  const {
    db,
    client,
    availability,
    close: closeDb,
  } = createDb(config.databaseUrl, {
    timeoutMs: config.databaseTimeoutMs,
    prepare: config.databasePrepare,
    listenUrl: config.databaseListenUrl ?? undefined,
    readModel: config.readModel,
    name: `bridge ${config.bridge.instanceId}`,
  });
  useTenantLabels(config.metrics.tenantLabels);
  const tokens = createTokenResolver(db, config.adminToken);
  // a token revoked through the API is refused here once its answer is out (the read model)
  const hangups = hearHangups(client);
  const conclusions = new ConclusionWriter(db, config.databaseUrl, new ConclusionSpool(spoolDirOf(config)), {
    objectStore: objectStoreOf(config),
  });
  const deps: CallDeps = { db, availability, config, conclusions };
  const calls = new Set<CallHandle>();
  const reaper = new BridgeReaper(db, availability, config.bridge.instanceId, {
    intervalMs: config.bridge.heartbeatMs,
    ttlMs: config.bridge.heartbeatTtlMs,
  });
  // calls are refused (1013) until the previous run's calls are closed and this bridge beats
  let accepting = false;

  const track = (call: CallHandle | null) => {
    if (!call) return null; // refused by call_context
    calls.add(call);
    void call.done.finally(() => calls.delete(call));
    return call;
  };

  async function prepare(req: Request, url: URL, source: string | null): Promise<Upgrade> {
    if (!accepting) return { route: "refused" };
    const budget = startBudget(availability);
    const q = url.searchParams;
    const credentials = {
      authorization: req.headers.get("authorization"),
      token: q.get("token"),
      assistantId: q.get("assistantId"),
      agentId: q.get("agentId"),
      source,
    };
    if (url.pathname === "/v1/twilio") {
      // without credentials in the URL, they are expected in the start event's custom parameters
      const deferred =
        !credentials.authorization && !credentials.token && !credentials.assistantId && !credentials.agentId;
      const assistant = deferred ? null : await budget.bound(authorizeCall(db, tokens, credentials), "authorizing");
      return { route: "twilio", assistant, source };
    }
    const sampleRate = Number(q.get("sampleRate") ?? 16000);
    if (!(nativeSampleRates as readonly number[]).includes(sampleRate))
      throw badRequest("sampleRate", `must be one of ${nativeSampleRates.join(", ")}`);
    const testResultId = q.get("testResultId");
    if (testResultId !== null) {
      const authorized = authorizeTestCall(db, testResultId, q.get("testSecret") ?? "");
      const { assistant, test } = await budget.bound(authorized, "authorizing");
      return { route: "native", assistant, sampleRate, budget, test };
    }
    const assistant = await budget.bound(authorizeCall(db, tokens, credentials), "authorizing");
    return { route: "native", assistant, sampleRate, budget };
  }

  const { twilio } = config.bridge;
  const twilioApi = twilio.accountSid && twilio.authToken ? twilio : null;
  function protocolFor(data: Connection, socket: WireSocket): WireProtocol | null {
    if (data.route === "refused") {
      socket.close(...tryAgainLater);
      return null;
    }
    if (data.route === "native")
      return nativeProtocol(socket, data.sampleRate, (transport, start) =>
        startInboundCall(deps, data.assistant, transport, start.variables, {
          budget: data.budget,
          modality: start.modality,
          test: data.test,
        }).then(track),
      );
    // the stream's start event names the assistant: the budget starts with it
    let budget = startBudget(availability);
    return twilioProtocol(socket, {
      assistant: data.assistant,
      authorize: (p) => {
        budget = startBudget(availability);
        const credentials = {
          authorization: null,
          token: p.token ?? null,
          assistantId: p.assistantId ?? null,
          agentId: p.agentId ?? null,
          source: data.source,
        };
        return budget.bound(authorizeCall(db, tokens, credentials), "authorizing");
      },
      startCall: (assistant, transport, variables) =>
        startInboundCall(deps, assistant, transport, variables, { budget }).then(track),
      twilio: twilioApi,
    });
  }

  const sockets: HostedSockets<Connection> = {
    async fetch(req: Request, server: UpgradeTarget<Connection>) {
      const url = new URL(req.url);
      if (url.pathname === "/healthz") return Response.json({ status: "ok", calls: calls.size });
      if (url.pathname === "/metrics") return refuseMetrics(req, config.metrics.token, true) ?? bridgeMetricsResponse();
      if (url.pathname !== "/v1/calls" && url.pathname !== "/v1/twilio")
        return json(404, "not found: connect to /v1/calls or /v1/twilio");
      try {
        const upgrade = await prepare(req, url, server.requestIP(req)?.address ?? null);
        if (server.upgrade(req, { data: upgrade as Connection })) return undefined;
        return json(426, "this endpoint takes a websocket upgrade");
      } catch (error) {
        if (error instanceof AppError) return json(error.status, error.message, error.retryAfterSec);
        // the caller knows within 2 s: upgraded, then closed with 1013 (try again later)
        if (isDatabaseUnavailable(error)) {
          log.warn("call refused: database unavailable", { path: url.pathname, error: describeError(error) });
          if (server.upgrade(req, { data: { route: "refused" } as Connection })) return undefined;
          return json(503, "the service cannot take calls right now; retry shortly", 1);
        }
        log.error("bridge request failed", { path: url.pathname, error: describeError(error) });
        return json(500, "internal error");
      }
    },
    open(data, socket) {
      const protocol = protocolFor(data, socket);
      if (!protocol) return;
      data.protocol = protocol;
      protocol.onOpen();
    },
    message: (data, message) => data.protocol?.onMessage(message),
    close: (data) => data.protocol?.onClose(),
  };
  const listen = {
    port: options.port ?? config.bridge.port,
    hostname: "0.0.0.0",
    // the workers of one `start:bridge` share the port; the kernel spreads connections over them
    reusePort: config.bridge.workerIndex !== null,
    idleTimeout: 60,
  };
  const server = config.bridge.wsThread
    ? await startWsThread({ ...listen, leadMs: config.bridge.mediaLeadMs }, sockets)
    : serveInLoop(listen, sockets);
  if (config.bridge.workerIndex !== null) answerMetricsCollection();

  // each step waits for the database when it is away (a bridge starting during an outage serves
  // /healthz and refuses calls until it is back)
  const bridgeId = config.bridge.instanceId;
  await options.migrated;
  // the ends a previous run could not write carry the calls' history: they go before the recovery's bare ones
  await conclusions.replay();
  // recordings still there belong to calls of the previous run that never concluded (recovered below, bare)
  const recordings = recordingDirOf(config);
  for (const name of await readdir(recordings).catch(() => [])) await rm(join(recordings, name), { force: true });
  const recovered = await untilDatabase("closing the previous run's calls", () => recoverOrphanedTasks(db, bridgeId));
  if (recovered > 0) log.warn("bridge closed calls left open by its previous run", { count: recovered, bridgeId });
  // alive (and reaping the calls of bridges that are not) before the first call
  await untilDatabase("first heartbeat", () => reaper.start());
  accepting = true;
  log.info("bridge listening", { port: server.port, bridgeId, wsThread: config.bridge.wsThread });
  // Bun's first fetch in a process sets its HTTP client up (~30 ms here): made now, on our own health
  // check, it is not the first LLM request of the first pipeline turn (bench/pipeline, A p99)
  void fetch(`http://127.0.0.1:${server.port}/healthz`)
    .then((res) => res.arrayBuffer())
    .catch(() => {});

  return {
    port: server.port,
    url: `ws://127.0.0.1:${server.port}`,
    /** Calls in progress (for tests and shutdown). */
    get activeCalls() {
      return calls.size;
    },
    /** Ends every call; a conclusion that cannot be written within `graceMs` stays in the spool. */
    async stop({ graceMs = 10_000 }: { graceMs?: number } = {}) {
      const ending = Promise.allSettled(
        [...calls].map((call) => {
          call.end("bridge-shutdown");
          return call.done;
        }),
      );
      const grace = setTimeout(() => conclusions.stop(), graceMs);
      await ending;
      clearTimeout(grace);
      conclusions.stop();
      // a database that went away must not hold the stop: the row then simply expires
      await within(reaper.stop(), 2_000, "removing the heartbeat").catch((error) =>
        log.warn("bridge heartbeat not removed", { error: describeError(error) }),
      );
      await server.stop();
      await hangups.unlisten();
      await closeDb();
    },
  };
}

export type Bridge = Awaited<ReturnType<typeof startBridge>>;

/** The websocket server in this event loop (BRIDGE_WS_THREAD=false): frames go out as the call hands them over. */
function serveInLoop(
  listen: { port: number; hostname: string; reusePort: boolean; idleTimeout: number },
  sockets: HostedSockets<Connection>,
) {
  const socketOf = (ws: ServerWebSocket<Connection>): WireSocket => ({
    sendText: (text) => void ws.send(text),
    sendBinary: (bytes) => void ws.send(bytes),
    close: (code, reason) => ws.close(code, reason),
    sendFrame: (frame) => void ws.send(frame),
    clearFrames: () => {},
    // (nothing is held back: each frame went when it was due)
    pauseFrames: () => {},
    resumeFrames: () => {},
    frameLeadMs: 0,
  });
  const server = Bun.serve({
    port: listen.port,
    hostname: listen.hostname,
    reusePort: listen.reusePort,
    fetch: (req, srv) => sockets.fetch(req, srv),
    websocket: {
      data: {} as Connection,
      idleTimeout: listen.idleTimeout,
      open: (ws) => sockets.open(ws.data, socketOf(ws)),
      message: (ws, message) => sockets.message(ws.data, message),
      close: (ws) => sockets.close(ws.data),
    },
  });
  return { port: server.port!, stop: () => server.stop(true) };
}
