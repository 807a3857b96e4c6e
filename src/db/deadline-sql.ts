// A postgres.js handle whose every statement has a deadline, and which fails at once while the
// database is known to be away. postgres.js itself has none: a statement sent on a connection that a
// partition black-holed waits for TCP to give up (minutes), and a statement queued behind it as long.
//
// - A statement past its deadline is rejected for its caller; if it never reached a connection it is
//   taken out of the queue and never runs. If no other statement was answered meanwhile either, the
//   database counts as away and every connection is dropped (a silent connection answers nothing ever
//   again; its peers likely share its fate), which settles what waits on them. A statement that only
//   waited (on a lock, for a free connection) while others were answered leaves the rest alone.
// - A transaction that gets no connection within the deadline is given up the same way; its callback
//   refuses to run if the connection comes later, so a caller told "failed" never sees it commit.
import type { Socket } from "node:net";
import type { PendingQuery, Sql } from "postgres";
import type { DatabaseAvailability } from "./availability";
import { DatabaseUnavailableError, isDatabaseUnavailable } from "./unavailable";

/** The parts of postgres.js's Query this module drives (not in its public types). */
type AnyFunction = (...args: unknown[]) => unknown;

type Query = PendingQuery<never> & {
  state: unknown;
  executed: boolean;
  reject(error: unknown): void;
  cancel(): void;
};

export type DeadlineGuard = {
  timeoutMs: number;
  availability: DatabaseAvailability;
  /** drops every connection of the handle (its sockets), so what waits on them fails now */
  dropConnections(): void;
};

const unavailable = () => new DatabaseUnavailableError("database unavailable");

/** `sql` with deadlines; `listen`, `end` and the rest pass through. */
export function withDeadlines<S extends Sql>(sql: S, guard: DeadlineGuard): S {
  return new Proxy(sql, {
    apply: (target, _this, args) => bounded(guard, (target as unknown as (...a: unknown[]) => Query)(...args)),
    get(target, property) {
      if (property === "unsafe")
        return (...args: unknown[]) => bounded(guard, (target.unsafe as unknown as AnyFunction)(...args) as Query);
      if (property === "begin") return (...args: unknown[]) => begin(target, guard, args);
      // a transaction's handle: savepoints run their statements with deadlines too
      const savepoint = (target as { savepoint?: AnyFunction }).savepoint;
      if (property === "savepoint" && savepoint)
        return (...args: unknown[]) => {
          const fn = args.pop() as (tx: Sql) => unknown;
          return savepoint(...args, (tx: Sql) => fn(withDeadlines(tx, guard)));
        };
      return Reflect.get(target, property, target);
    },
  });
}

/** Runs `query` on the real handle with a deadline of its own (the availability probe). */
export function probeWithin(query: PendingQuery<never>, ms: number, onLate: () => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      giveUp(query as Query, new DatabaseUnavailableError(`database did not answer within ${ms} ms`));
      onLate();
      reject(new DatabaseUnavailableError("probe timed out"));
    }, ms);
    query.then(
      (rows) => {
        clearTimeout(timer);
        resolve(rows);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function bounded(guard: DeadlineGuard, query: Query): Query {
  if (guard.availability.isDown) {
    // never executed: awaiting it must not send it later, when the caller has long been told it failed
    query.executed = true;
    query.reject(unavailable());
    return query;
  }
  const sent = performance.now();
  const timer = setTimeout(() => {
    giveUp(query, new DatabaseUnavailableError(`database did not answer within ${guard.timeoutMs} ms`));
    late(guard, sent);
  }, guard.timeoutMs);
  // the native then: postgres.js's own would start the query before the caller has chained .values()
  Promise.prototype.then.call(
    query,
    () => {
      clearTimeout(timer);
      guard.availability.succeeded();
    },
    (error: unknown) => {
      clearTimeout(timer);
      if (isDatabaseUnavailable(error)) guard.availability.failed(describe(error));
    },
  );
  return query;
}

function giveUp(query: Query, error: Error) {
  query.reject(error);
  // not yet on a connection: out of the queue, so it never runs (postgres.js rejects it a second time, unseen)
  if (!query.state) query.cancel();
}

function late(guard: DeadlineGuard, since: number) {
  if (guard.availability.answeredSince(since)) return;
  guard.availability.failed(`no answer within ${guard.timeoutMs} ms`);
  guard.dropConnections();
}

async function begin(target: Sql, guard: DeadlineGuard, args: unknown[]) {
  if (guard.availability.isDown) throw unavailable();
  const fn = args.pop() as (tx: Sql) => unknown;
  let expired = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const asked = performance.now();
  const acquired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired = true;
      reject(new DatabaseUnavailableError(`no database connection within ${guard.timeoutMs} ms`));
      late(guard, asked);
    }, guard.timeoutMs);
  });
  const run = (target.begin as unknown as AnyFunction)(...args, (tx: Sql) => {
    clearTimeout(timer);
    if (expired) throw unavailable();
    return fn(withDeadlines(tx, guard));
  }) as Promise<unknown>;
  try {
    return await Promise.race([run, acquired]);
  } catch (error) {
    if (isDatabaseUnavailable(error)) guard.availability.failed(describe(error));
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

function describe(error: unknown) {
  const e = error as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message ?? ""}` : (e.message ?? String(error));
}

/** Sockets of one handle, so that they can all be dropped at once. */
export function socketRegistry() {
  const sockets = new Set<Socket>();
  // postgres.js removes every listener of a socket it is done with (ours too): closed ones are pruned here
  const prune = () => {
    for (const socket of sockets) if (socket.destroyed) sockets.delete(socket);
  };
  return {
    add(socket: Socket) {
      prune();
      sockets.add(socket);
      return socket;
    },
    /** Without an error: an 'error' event on a socket whose listeners are gone would be uncaught. */
    dropAll() {
      for (const socket of sockets) if (!socket.destroyed) socket.destroy();
      sockets.clear();
    },
  };
}
