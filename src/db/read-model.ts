// The per-process read model: what reads by id need (assistants, agents, strategies, their tools and
// hooks, as the API answers them and as a call starts with them), kept in memory and exact across every
// process by LISTEN/NOTIFY on one channel. The rule and its proof are in docs/architecture.md ("The
// read model"): a write is seen by every process before its answer returns, or that process reads
// Postgres. In short:
// - a write NOTIFYs its tags in its transaction ("i"), so every listener hears it at commit, in commit order;
// - every listener drops what the tags name as it hears them, and answers the writer ("a": an ack);
// - a reader trusts its cache only while its own tick ("t", sent every leaseMs/4 on a connection of its own) came
//   back less than leaseMs ago: hearing it proves that every commit before the tick was sent was heard;
// - after its commit the writer waits for its own "i" to come back, then for an ack from every process
//   whose tick it heard within leaseMs (at most until that process's trust lapses), and only then answers.
// A lost LISTEN connection (reconnected by postgres.js) empties the cache; until ticks come back, reads
// go to Postgres.
import { randomBytes } from "node:crypto";
import { sql, type SQL } from "drizzle-orm";
import type { Sql } from "postgres";
import { listenAlways, type Listening } from "./listen";
import { recordReadModelRead } from "../metrics/metrics";

export const READ_MODEL_CHANNEL = "read_model";
const MAX_ENTRIES = 50_000;
/**
 * a process that has not read through the model for this long stops ticking (its trust lapses; its next
 * read of a kept value waits for one tick, not Postgres). Not longer: a bridge reads at its calls' starts
 * only, and 40 ticks a second (its own, its round trips to Postgres and the echoes it hears) were a
 * sixth of its event loop's busy time while 50 calls talked (bench conversation, docs/voice.md)
 */
const IDLE_AFTER_MS = 1_000;

/**
 * The names a write touches and a kept value depends on, made here only, so that a reader and a writer
 * cannot spell one differently (a misspelt tag is a drop that never happens).
 */
export const readTags = {
  org: (organizationId: string) => `org:${organizationId}`,
  assistant: (id: string) => `assistant:${id}`,
  /** any assistant or agent of the organization: its list pages, its numbers' routes */
  assistants: (organizationId: string) => `assistants:${organizationId}`,
  strategy: (id: string) => `strategy:${id}`,
  token: (tokenId: string) => `token:${tokenId}`,
  /** a credential's phone numbers */
  numbers: (credentialId: string) => `numbers:${credentialId}`,
};

export type ReadModelOptions = { enabled: boolean; leaseMs: number };
/** the tags a write touches, collected while its transaction runs */
export type Touch = (...tags: string[]) => void;

type Entry = { value: unknown; tags: string[] };
type PendingWrite = { echoed: boolean; acks: Set<string>; peers: [string, number][]; wake: () => void };

/**
 * `transact` runs work in one transaction of the process's handle (a drizzle database's `transaction`);
 * `signals` sends the ticks and acks (a connection of their own, so that they never wait behind `client`'s queries).
 */
export function createReadModel<Tx extends { execute(query: SQL): PromiseLike<unknown> }>(
  client: Sql,
  options: ReadModelOptions,
  transact: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>,
  signals: Sql = client,
) {
  const self = randomBytes(6).toString("hex");
  const tickMs = Math.max(1, Math.floor(options.leaseMs / 4));
  const entries = new Map<string, Entry>();
  const byTag = new Map<string, Set<string>>();
  // bumped by every drop: a load that overlapped one may hold what was just dropped, so it is not kept
  let epoch = 0;
  let syncedAt = Number.NEGATIVE_INFINITY;
  let listeningSince = Number.POSITIVE_INFINITY;
  let lastUse = Number.NEGATIVE_INFINITY;
  let listening: Listening | null = null;
  let ticker: ReturnType<typeof setInterval> | null = null;
  let tickInFlight = false;
  let writes = 0;
  /** when the latest tick of each process reached us */
  const peers = new Map<string, number>();
  const pending = new Map<string, PendingWrite>();
  /** reads waiting for this process's next tick to come back */
  const tickWaiters: (() => void)[] = [];

  const now = () => performance.now();
  const notify = (payload: string) => signals.unsafe("select pg_notify($1, $2)", [READ_MODEL_CHANNEL, payload]);

  function remove(key: string) {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    for (const tag of entry.tags) {
      const keys = byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) byTag.delete(tag);
    }
  }

  function clear() {
    epoch++;
    entries.clear();
    byTag.clear();
  }

  function drop(tags: string[]) {
    epoch++;
    for (const tag of tags) for (const key of byTag.get(tag) ?? []) remove(key);
  }

  function store(key: string, tags: string[], value: unknown) {
    remove(key);
    if (entries.size >= MAX_ENTRIES) remove(entries.keys().next().value!);
    entries.set(key, { value, tags });
    for (const tag of tags) (byTag.get(tag) ?? byTag.set(tag, new Set()).get(tag)!).add(key);
  }

  // Runs synchronously for each notification, in the order Postgres delivers them (commit order).
  function heard(payload: string) {
    const [kind, from, seq, ...rest] = payload.split(" ");
    if (!from || !seq) return;
    if (kind === "i") {
      drop(rest);
      if (from !== self) void notify(`a ${self} ${from}:${seq}`).catch(() => {});
      else echoed(seq);
    } else if (kind === "t") {
      peers.set(from, now());
      if (from !== self) return;
      syncedAt = Math.max(syncedAt, Number(seq));
      for (const wake of tickWaiters.splice(0)) wake();
    } else if (kind === "a") {
      const [writer, n] = seq.split(":");
      const write = writer === self ? pending.get(n!) : undefined;
      write?.acks.add(from);
      write?.wake();
    }
  }

  function echoed(seq: string) {
    const write = pending.get(seq);
    if (!write) return;
    // who may trust its cache now: whoever ticked within the lease (a later tick was sent after it heard us)
    const at = now();
    // a process silent for a lease trusts nothing it heard before: forgotten (processes come and go)
    for (const [peer, heardAt] of peers) if (heardAt + options.leaseMs <= at) peers.delete(peer);
    write.peers = [...peers].filter(([peer]) => peer !== self);
    write.echoed = true;
    write.wake();
  }

  function tick() {
    if (tickInFlight || now() - lastUse > IDLE_AFTER_MS) return;
    tickInFlight = true;
    notify(`t ${self} ${now()}`)
      .catch(() => {})
      .finally(() => (tickInFlight = false));
  }

  function start() {
    if (listening) return;
    listening = listenAlways(client, READ_MODEL_CHANNEL, heard, () => {
      // notifications sent while the connection was down are lost: whatever was kept may be stale
      clear();
      syncedAt = Number.NEGATIVE_INFINITY;
      peers.clear();
      listeningSince = now();
    });
    ticker = setInterval(tick, tickMs);
    ticker.unref?.();
  }

  const trusted = () => now() - syncedAt < options.leaseMs;

  /**
   * Whether the model is trusted again within `ms`: ticks are sent (one at a time) until one that
   * comes back restores trust. After a stall of the event loop longer than the lease, the next tick
   * is one round trip on the signalling connection, shared by every read waiting; reading Postgres
   * instead costs each of them its own queries, queued in the pool behind the process's writes.
   */
  async function untilTrusted(ms: number): Promise<boolean> {
    const deadline = now() + ms;
    while (!trusted()) {
      const left = deadline - now();
      if (left <= 0) return false;
      tick();
      const heard = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          tickWaiters.splice(tickWaiters.indexOf(wake), 1); // still there: a wake-up clears the timer
          resolve(false);
        }, left);
        const wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
        tickWaiters.push(wake);
      });
      if (!heard) return trusted();
    }
    return true;
  }

  /**
   * The value under `key`, from memory while this process is synced, else from `load` (kept, tagged
   * with `tags`, unless a write touched anything meanwhile). null is never kept.
   */
  async function read<T>(key: string, tags: (value: T) => string[], load: () => Promise<T | null>): Promise<T | null> {
    if (!options.enabled) return load();
    lastUse = now();
    start();
    // a value kept but not trusted just now (the loop stalled past the lease): the next tick, not Postgres
    if (trusted() || (entries.has(key) && (await untilTrusted(options.leaseMs)))) {
      const hit = entries.get(key);
      if (hit) {
        recordReadModelRead("memory");
        return hit.value as T;
      }
    }
    recordReadModelRead("database");
    const before = epoch;
    const value = await load();
    if (value !== null && epoch === before) store(key, tags(value), value);
    return value;
  }

  /** Waits until every process has dropped write `seq` or stopped trusting its cache. */
  async function settle(seq: string, committedAt: number) {
    const write = pending.get(seq)!;
    // unseen peers: a process whose tick came before we listened trusts it at most until listeningSince + lease
    const floor = listeningSince + options.leaseMs;
    for (;;) {
      const at = now();
      let until: number;
      if (!write.echoed) until = committedAt + options.leaseMs;
      else {
        const waiting = write.peers.filter(
          ([peer, heardAt]) => !write.acks.has(peer) && heardAt + options.leaseMs > at,
        );
        until = Math.max(floor, ...waiting.map(([, heardAt]) => heardAt + options.leaseMs));
      }
      // by then every trust earned before the commit has lapsed, whatever was heard
      until = Math.min(until, committedAt + options.leaseMs);
      if (until <= at) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, until - at);
        write.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /**
   * Runs `work` in a transaction; the tags it touches are announced at its commit, and the answer waits
   * until no process can read what they name from before it.
   */
  async function write<T>(work: (tx: Tx, touch: Touch) => Promise<T>): Promise<T> {
    if (!options.enabled) return transact((tx) => work(tx, () => {}));
    start();
    const seq = String(++writes);
    const tags = new Set<string>();
    pending.set(seq, { echoed: false, acks: new Set(), peers: [], wake: () => {} });
    try {
      const result = await transact(async (tx) => {
        const value = await work(tx, (...touched) => {
          for (const tag of touched) tags.add(tag);
        });
        if (tags.size > 0)
          await tx.execute(sql`select pg_notify(${READ_MODEL_CHANNEL}, ${`i ${self} ${seq} ${[...tags].join(" ")}`})`);
        return value;
      });
      if (tags.size === 0) return result;
      const committedAt = now();
      drop([...tags]);
      await settle(seq, committedAt);
      return result;
    } finally {
      pending.delete(seq);
    }
  }

  /** The value under `key` if memory may answer now; never goes to Postgres. */
  const peek = (key: string): unknown => (options.enabled && trusted() ? (entries.get(key)?.value ?? null) : null);

  return {
    read,
    peek,
    write,
    /** for tests and the bench: whether reads are now served from memory */
    trusted: () => options.enabled && trusted(),
    size: () => entries.size,
    async stop() {
      if (ticker) clearInterval(ticker);
      await listening?.unlisten();
    },
  };
}
