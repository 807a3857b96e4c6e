// The one place that opens database connections. Every handle has deadlines (connecting and each
// statement: `timeoutMs`, DATABASE_TIMEOUT_MS), fails fast while the database is away, and knows when
// it came back (availability.ts, deadline-sql.ts): a database outage degrades a process, never ends it.
import { connect as connectSocket } from "node:net";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { DatabaseAvailability } from "./availability";
import { probeWithin, socketRegistry, withDeadlines } from "./deadline-sql";
import * as schema from "./schema";
import { usePreparedStatements } from "./statement-mode";
import { createReadModel, type ReadModelOptions } from "./read-model";

export const defaultDatabaseTimeoutMs = 5_000;

export type DbOptions = {
  max?: number;
  /** connect and statement deadline */
  timeoutMs?: number;
  /** names the handle in the outage log lines */
  name?: string;
  /** false (DATABASE_PREPARE=false): no named prepared statements, for PgBouncer in transaction mode */
  prepare?: boolean;
  /** where LISTEN and reserved connections go when not `url` (DATABASE_LISTEN_URL: a session, which a transaction pooler is not) */
  listenUrl?: string;
  /** the per-process read model (READ_MODEL, READ_MODEL_LEASE_MS): on, with a 100 ms lease, unless told */
  readModel?: ReadModelOptions;
  /**
   * open every pooled connection at once (in the background) instead of on demand: postgres.js opens
   * one per query that finds none idle, so a burst at a fresh process waits for up to `max` connects
   * (TCP, authentication, its type query) on the statements that answer calls
   */
  warm?: boolean;
  /**
   * this many connections of their own for the statements a caller waits on (answerPathOf): in the
   * pool they queued behind the calls' transactions, each holding its connection for several turns of
   * a busy event loop
   */
  answerPath?: number;
};

type ReadModel = ReturnType<typeof createReadModel<Tx>>;
const readModels = new WeakMap<Db, ReadModel>();
/** The read model of the process's database handle (src/db/read-model.ts). */
export const readModelOf = (db: Db): ReadModel => readModels.get(db)!;
const signallings = new WeakMap<Db, postgres.Sql>();
/** A connection of its own for NOTIFYs sent outside a transaction: they never wait behind the pool's queue. */
export const signallingOf = (db: Db): postgres.Sql => signallings.get(db)!;
const answerPaths = new WeakMap<Db, Db>();
/** The handle for statements a caller waits on: connections of their own when `answerPath` asked for them, else `db`. */
export const answerPathOf = (db: Db): Db => answerPaths.get(db) ?? db;

export function createDb(url: string, options: DbOptions = {}) {
  const timeoutMs = options.timeoutMs ?? defaultDatabaseTimeoutMs;
  const sockets = socketRegistry();
  if (options.prepare === false) usePreparedStatements(false);
  const connect = (max: number) =>
    postgres(url, {
      max,
      prepare: options.prepare ?? true,
      onnotice: () => {},
      connect_timeout: timeoutMs / 1000,
      // reconnects at most a second apart (postgres.js's default grows to 20 s): back within 5 s of the database
      backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
      // our own sockets, so that a silent database's connections can be dropped at once
      socket: (o: { host: string[]; port: number[]; path?: string }) =>
        sockets.add(o.path ? connectSocket(o.path) : connectSocket({ host: o.host[0]!, port: o.port[0]! })),
    } as postgres.Options<Record<string, postgres.PostgresType>>);
  const max = options.max ?? 10;
  const raw = connect(max);
  const probeTimeoutMs = Math.min(timeoutMs, 1_000);
  const availability = new DatabaseAvailability(options.name ?? "db", { probeEveryMs: 500, probeTimeoutMs }, () =>
    probeWithin(raw.unsafe("select 1") as never, probeTimeoutMs, sockets.dropAll),
  );
  const bounded = withDeadlines(raw, { timeoutMs, availability, dropConnections: sockets.dropAll });
  const answering = options.answerPath ? connect(options.answerPath) : null;
  const answeringBounded =
    answering && withDeadlines(answering, { timeoutMs, availability, dropConnections: sockets.dropAll });
  // a connection that fails here is opened again by the next query that needs it, as without warming
  const warm = (pool: postgres.Sql, n: number) => {
    for (let i = 0; i < n; i++) pool`select 1`.catch(() => {});
  };
  if (options.warm) {
    warm(bounded, max);
    if (answeringBounded) warm(answeringBounded, options.answerPath!);
  }
  const listener =
    options.listenUrl && options.listenUrl !== url
      ? postgres(options.listenUrl, {
          max: 1,
          onnotice: () => {},
          connect_timeout: timeoutMs / 1000,
          backoff: raw.options.backoff,
        } as postgres.Options<Record<string, postgres.PostgresType>>)
      : null;
  const client = listener ? listenThrough(bounded, listener) : bounded;
  const db = drizzle(client, { schema });
  // the read model's ticks and acks on a connection of their own: queued behind a busy pool's queries
  // they came back later than the lease, every read went to Postgres and made the queue longer still
  const signalling = connect(1);
  const signals = withDeadlines(signalling, { timeoutMs, availability, dropConnections: sockets.dropAll });
  const reads = createReadModel<Tx>(
    client,
    options.readModel ?? { enabled: true, leaseMs: 100 },
    (work) => db.transaction(work),
    signals,
  );
  readModels.set(db, reads);
  signallings.set(db, signals);
  if (answeringBounded) answerPaths.set(db, drizzle(answeringBounded, { schema }));
  return {
    db,
    client,
    availability,
    close: async () => {
      availability.close();
      await reads.stop();
      await signalling.end({ timeout: 5 });
      await listener?.end({ timeout: 5 });
      await answering?.end({ timeout: 5 });
      return raw.end({ timeout: 5 });
    },
  };
}

export type Db = ReturnType<typeof createDb>["db"];
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** A database handle or an open transaction: services take either, so callers can compose them. */
export type DbOrTx = Db | Tx;

/**
 * `sql` whose session-scoped uses go to `listener`'s connection: LISTEN, and reserved connections (the
 * hook dispatcher's lease, a session advisory lock that must end with the process: behind a transaction
 * pooler it would stay on a pooled server connection, and a dead worker's claims with it). Everything
 * else stays on `sql`.
 */
function listenThrough<S extends postgres.Sql>(sql: S, listener: postgres.Sql): S {
  const session = new Set<PropertyKey>(["listen", "reserve"]);
  return new Proxy(sql, {
    get: (target, property) =>
      session.has(property)
        ? (listener[property as "listen" | "reserve"] as (...args: unknown[]) => unknown).bind(listener)
        : Reflect.get(target, property),
  });
}
