// Everything a SIP test talks to, all real: the API (tenants, credentials, numbers, assistants),
// Postgres, Temporal with a hook worker, a hook receiver, the fake chat endpoint for summaries, fake
// realtime providers, Kamailio as the trunk, and bridges (the SIP stack) started per test file.
import { loadConfig } from "../../../src/config";
import { createDb } from "../../../src/db/client";
import { credentialLock } from "../../../src/sip/reserve-task";
import { startSipStack, type SipStack } from "../../../src/sip/sip-stack";
import { startFakeChatServer } from "../../fakes/chat-completions-server";
import { startFakeRealtimeHub, type FakeRealtimeOptions } from "../../fakes/openai-realtime-server";
import { createTenant, startTestApi, toolSchema, type Tenant } from "../../helpers/api";
import { startReceiver } from "../../helpers/receiver";
import { ensureTemporal, freePort, startWorker, taskQueueEnv } from "../../helpers/temporal";
import { eventually } from "./eventually";
import { startKamailio, type Trunk } from "./kamailio";

export type SipAssistantSpec = {
  numberId: string;
  greeting?: string;
  systemPrompt?: string;
  fake?: FakeRealtimeOptions;
  tools?: { name: string; serverUrl: string }[];
  /** other extensions, as the API takes them */
  extensions?: { type: string; parameters: Record<string, unknown> }[];
};

// each bridge of the run its own 200 ports within 30000-37999, wrapping: tests that pin a range of their
// own use 38000 and up (workers-sip, takeover), where a long run's bridges would otherwise climb
const rtpBand = { min: 30_000, size: 8_000 };
let rtpSlot = (process.pid % 40) * 200;
const nextRtpBase = () => {
  const base = rtpBand.min + (rtpSlot % rtpBand.size);
  rtpSlot += 200;
  return base;
};

/** `apiEnv`: more of the API's settings (a bridge's are startBridge's). */
export async function startSipWorld(
  trunkUsers: Record<string, string>,
  dids: Record<string, string>,
  apiEnv: Record<string, string> = {},
) {
  const { address } = await ensureTemporal();
  // the API signals campaign workflows: on this run's Temporal, to this world's worker
  const taskQueue = `sip-world-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const [api, hooks, chat, worker, trunk, realtime] = await Promise.all([
    startTestApi({ TEMPORAL_ADDRESS: address, ...taskQueueEnv(taskQueue), ...apiEnv }),
    startReceiver(),
    startFakeChatServer(),
    startWorker({ address, backoffBaseMs: 1_000, taskQueue }),
    startKamailio(trunkUsers, dids),
    startFakeRealtimeHub(),
  ]);
  const tenant = await createTenant(api.url, "sip");
  const bridges: SipStack[] = [];

  async function startBridge(name: string, env: Record<string, string> = {}) {
    const rtpBase = nextRtpBase();
    const config = loadConfig({
      ...process.env,
      OPENAI_BASE_URL: chat.baseUrl,
      OPENAI_REALTIME_URL: realtime.url,
      BRIDGE_INSTANCE_ID: `sip-${name}-${process.pid}`,
      SIP_PORT: String(await freePort()),
      SIP_BIND_HOST: "127.0.0.1",
      SIP_PUBLIC_HOST: "127.0.0.1",
      RTP_PORT_MIN: String(rtpBase),
      RTP_PORT_MAX: String(rtpBase + 199),
      // the default lease: a bridge in this process may stall for seconds on a loaded CI machine, and a
      // lease lost to a sibling mid-test is not what these tests look at (takeover.test.ts sets its own)
      SIP_LEASE_MS: "10000",
      SIP_REGISTER_RETRY_MS: "500",
      SIP_REGISTER_EXPIRES: "60",
      RTP_TIMEOUT_MS: "4000",
      ...env,
    });
    const bridge = await startSipStack(config);
    bridges.push(bridge);
    return Object.assign(bridge, { sipPort: config.bridge.sip.port, bridgeId: config.bridge.instanceId });
  }

  // what a tenant made, deleted at the end (every bridge runs a user agent per credential in the
  // database: later files must not inherit ours); assistants before numbers before credentials
  const cleanup: (() => Promise<unknown>)[] = [];

  /** The API calls of one tenant, its credentials on `defaultTrunk` unless told otherwise. */
  function tenantHelpers(t: Tenant, defaultTrunk: Trunk) {
    const { org, P } = t;
    const onNumber = new Map<string, string>();
    return {
      tenant: t,
      async createCredential(username: string, password: string, maxAgentTasks?: number, on: Trunk = defaultTrunk) {
        const res = await org.post(`${P}/sip/credentials`, {
          hostname: on.host,
          port: on.port,
          username,
          password,
          ...(maxAgentTasks && { maxAgentTasks }),
        });
        if (res.status !== 201) throw new Error(`credential not created: ${JSON.stringify(res.body)}`);
        const id = res.body.data.id as string;
        cleanup.push(() => org.delete(`${P}/sip/credentials/${id}`));
        return id;
      },
      /** PUT: the given fields over the credential's current ones (the password must always be sent). */
      async updateCredential(id: string, fields: { password: string; username?: string; maxAgentTasks?: number }) {
        const current = (await org.get(`${P}/sip/credentials/${id}`)).body.data;
        const body = {
          hostname: current.hostname,
          port: current.port,
          username: current.username,
          maxAgentTasks: current.maxAgentTasks,
          ...fields,
        };
        const res = await org.put(`${P}/sip/credentials/${id}`, body);
        if (res.status !== 200) throw new Error(`credential not updated: ${JSON.stringify(res.body)}`);
      },
      async createNumber(credentialId: string, phoneNumber: string, fallback = false) {
        const res = await org.post(`${P}/sip/credentials/${credentialId}/phone-numbers`, { phoneNumber, fallback });
        if (res.status !== 201) throw new Error(`number not created: ${JSON.stringify(res.body)}`);
        const id = res.body.data.id as string;
        cleanup.push(() => org.delete(`${P}/sip/credentials/${credentialId}/phone-numbers/${id}`));
        return id;
      },
      /** An assistant on the number (taking it from the previous one), with its own fake provider and hooks. */
      async createAssistant(spec: SipAssistantSpec) {
        const previous = onNumber.get(spec.numberId);
        if (previous) {
          // a failed delete would otherwise show up as the number still serving it (409 below)
          const deleted = await org.delete(`${P}/assistants/${previous}`);
          if (deleted.status !== 200) throw new Error(`assistant not deleted: ${JSON.stringify(deleted.body)}`);
        }
        const fake = realtime.add(spec.fake ?? {});
        const strategy = await org.post(`${P}/llm-generation-strategies`, {
          name: "fake",
          type: "openai_realtime",
          parameters: { model: fake.model },
        });
        const created = await org.post(`${P}/assistants`, {
          name: "phone desk",
          systemPrompt: spec.systemPrompt ?? "You answer the phone.",
          llmAudioContentGenerationStrategyId: strategy.body.data.id,
          telephoneNumberId: spec.numberId,
          ...(spec.greeting && { systemPromptGreeting: spec.greeting }),
          extensions: [
            ...(spec.tools ?? []).map((tool) => ({
              type: "tool_webhook",
              parameters: { name: tool.name, serverUrl: tool.serverUrl, schema: toolSchema(tool.name) },
            })),
            ...(spec.extensions ?? []),
          ],
          callEventHooks: ["call_started", "call_concluded"].map((type) => ({
            type,
            parameters: { url: `${hooks.url}/hooks` },
          })),
        });
        if (created.status !== 201) throw new Error(`assistant not created: ${JSON.stringify(created.body)}`);
        const id = created.body.data.id as string;
        onNumber.set(spec.numberId, id);
        cleanup.push(() => org.delete(`${P}/assistants/${id}`));
        return { id, fake };
      },
      async credential(id: string) {
        return (await org.get(`${P}/sip/credentials/${id}`)).body.data;
      },
      /** Resolves once a bridge has registered the credential at its trunk. */
      async registered(id: string) {
        await eventually(
          async () => (await org.get(`${P}/sip/credentials/${id}`)).body.data.registration?.state === "registered",
          `registration of ${id}`,
        );
      },
      async tasks(filter: (task: any) => boolean = () => true): Promise<any[]> {
        return ((await org.get(`${P}/agent-tasks?size=100`)).body.data as any[]).filter(filter);
      },
    };
  }

  const trunks: Trunk[] = [trunk];
  async function startTrunk(
    users: Record<string, string>,
    dids: Record<string, string>,
    host: string,
    config?: string,
  ) {
    const other = await startKamailio(users, dids, host, config);
    trunks.push(other);
    return other;
  }
  const own = tenantHelpers(tenant, trunk);
  const world = {
    api,
    worker,
    hooks,
    chat,
    /** The fake realtime provider every assistant's fake sits behind (OPENAI_REALTIME_URL of bridges). */
    realtime,
    trunk,
    startBridge,
    ...own,
    /** Another vendor (tenant) of the service, its credentials on `on` (default: the world's trunk). */
    async otherVendor(name: string, on: Trunk = trunk) {
      return tenantHelpers(await createTenant(api.url, name), on);
    },
    /** Another Kamailio, listening on another loopback address (stopped with the world); `config` as startKamailio's. */
    startTrunk,
    /**
     * The start most SIP test files share: a trunk of its own (`config`, default kamailio-outbound.cfg:
     * `dids` routes a number to a registered user or to a host:port) with one user (password
     * `<user>pass`), that user's credential with one number, and a bridge (`bridge` names it, `env`
     * its settings) registered with it.
     */
    async registeredCredential(spec: {
      user: string;
      dids: Record<string, string>;
      number: string;
      bridge: string;
      maxAgentTasks?: number;
      config?: string;
      env?: Record<string, string>;
      /** the loopback address the trunk listens on (default 127.0.0.1) */
      host?: string;
    }) {
      const password = `${spec.user}pass`;
      const desk = await startTrunk(
        { [spec.user]: password },
        spec.dids,
        spec.host ?? "127.0.0.1",
        spec.config ?? "kamailio-outbound.cfg",
      );
      const credentialId = await own.createCredential(spec.user, password, spec.maxAgentTasks, desk);
      const numberId = await own.createNumber(credentialId, spec.number);
      const bridge = await startBridge(spec.bridge, spec.env);
      await own.registered(credentialId);
      return { trunk: desk, credentialId, numberId, bridge };
    },
    /** Holds the credential's reservation lock (as a bridge reserving a call does) until the returned release. */
    async holdReservations(credentialId: string): Promise<() => Promise<void>> {
      const { db, close } = createDb(process.env.DATABASE_URL!, { max: 1 });
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const held = new Promise<void>((r) => (locked = r));
      const done = db
        .transaction(async (tx) => {
          await tx.execute(credentialLock(credentialId));
          locked();
          await released;
        })
        .finally(close);
      await Promise.race([held, done]);
      return async () => {
        release();
        await done;
      };
    },
    /** Hook bodies of `type` received so far. */
    hookBodies(type: string): any[] {
      return hooks.requests.map((r) => JSON.parse(r.body.toString())).filter((b) => b.type === type);
    },
    async stop() {
      await Promise.allSettled(bridges.map((b) => b.stop()));
      for (const undo of cleanup.reverse()) await undo().catch(() => {});
      await Promise.allSettled([
        api.stop(),
        hooks.close(),
        chat.close(),
        worker.kill(),
        realtime.close(),
        ...trunks.map((t) => t.stop()),
      ]);
    },
  };
  return world;
}

export type SipWorld = Awaited<ReturnType<typeof startSipWorld>>;

export { eventually } from "./eventually";
