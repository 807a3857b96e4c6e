// Statements on the hot paths (every emit, every hook attempt) as prepared statements. Drizzle's
// `execute` runs unprepared, so Postgres parses and plans the statement every time; prepared (postgres.js
// keeps one per statement text and connection), an emit cost half the CPU in Postgres and in the
// caller (bench/hooks, 1,000 emits: Postgres 1.6 s -> 0.8 s, caller 1.4 s -> 0.6 s).
import type { SQL } from "drizzle-orm";
import type { PgDialect } from "drizzle-orm/pg-core";
import type { Sql } from "postgres";
import type { DbOrTx } from "./client";
import { preparedStatements } from "./statement-mode";

/** Runs `query` on the connection (or transaction) of `db`, prepared unless DATABASE_PREPARE=false; rows as Postgres names them. */
export async function executePrepared<T extends Record<string, unknown>>(db: DbOrTx, query: SQL): Promise<T[]> {
  // the postgres.js handle under drizzle's database or transaction object (not in drizzle's public types)
  const { session, dialect } = db as unknown as { session: { client: Sql }; dialect: PgDialect };
  const built = dialect.sqlToQuery(query);
  return (await session.client.unsafe(built.sql, built.params as never[], {
    prepare: preparedStatements(),
  })) as unknown as T[];
}

/**
 * A drizzle query with placeholders, run prepared under `name` unless DATABASE_PREPARE=false (then
 * planned each time, like any drizzle query). Build it once the process's pools exist (its config is
 * read then).
 */
export function preparedQuery<R>(
  query: { prepare(name: string): { execute(values: Record<string, unknown>): Promise<R> } },
  name: string,
): (values: Record<string, unknown>) => Promise<R> {
  if (preparedStatements()) {
    const prepared = query.prepare(name);
    return (values) => prepared.execute(values);
  }
  // the builder's own execute: drizzle runs a query without a name unprepared
  const unprepared = query as unknown as { execute(values: Record<string, unknown>): Promise<R> };
  return (values) => unprepared.execute(values);
}
