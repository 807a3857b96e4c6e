// Applies drizzle/'s migrations, from any number of processes started at once: each takes a Postgres
// advisory lock inside the one transaction that migrates, so the first applies what is missing and the
// others wait for its commit and find nothing left to do. A transaction-scoped lock (not a session's)
// holds through PgBouncer in transaction mode too. The bookkeeping is drizzle-kit's own
// (drizzle.__drizzle_migrations, the same rows its migrator writes), so existing databases carry on.
import postgres from "postgres";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { fileURLToPath } from "node:url";
import { log } from "../log";
import { defaultDatabaseTimeoutMs } from "./client";
import { untilDatabase } from "./until-available";

// a database that does not answer fails the attempt (and the caller retries) instead of hanging it
const connectTimeout = defaultDatabaseTimeoutMs / 1000;
const migrationsFolder = fileURLToPath(new URL("../../drizzle", import.meta.url));
/** The advisory lock's name (hashed to its key): whoever holds it in the database is migrating it. */
export const MIGRATION_LOCK = "voice-assistant-service: migrations";
// SQLSTATE of a CREATE DATABASE that lost the race to another process's (or its catalog row's)
const alreadyCreated = new Set(["42P04", "23505"]);

// one statement per round trip, unprepared: a pooler may hand the next transaction another connection
const connect = (url: string) =>
  postgres(url, { max: 1, prepare: false, onnotice: () => {}, connect_timeout: connectTimeout });

/** Creates the database when missing, then applies every migration not applied yet; returns how many. */
export async function migrateDatabase(url: string): Promise<number> {
  await ensureDatabase(url);
  const migrations = readMigrationFiles({ migrationsFolder });
  const client = connect(url);
  try {
    return await client.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext(${MIGRATION_LOCK}))`;
      await tx`create schema if not exists drizzle`;
      await tx`create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)`;
      const [last] = await tx<{ createdAt: string }[]>`
        select created_at as "createdAt" from drizzle.__drizzle_migrations order by created_at desc limit 1`;
      const pending = migrations.filter((m) => !last || Number(last.createdAt) < m.folderMillis);
      for (const migration of pending) {
        for (const statement of migration.sql) await tx.unsafe(statement);
        await tx`insert into drizzle.__drizzle_migrations (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`;
      }
      return pending.length;
    });
  } finally {
    await client.end({ timeout: 5 });
  }
}

/** A process's start: migrates once the database answers (waiting for it meanwhile), one line when done. */
export async function migrateOnStart(url: string) {
  const applied = await untilDatabase("migrations", () => migrateDatabase(url));
  log.info("schema migrated", { applied });
}

async function ensureDatabase(url: string) {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  await withAdmin(url, async (client) => {
    const rows = await client`select 1 from pg_database where datname = ${name}`;
    if (rows.length > 0) return;
    await client.unsafe(`create database "${name.replaceAll('"', '""')}"`).catch((error) => {
      if (!alreadyCreated.has((error as { code?: string }).code ?? "")) throw error;
    });
  });
}

export async function dropDatabase(url: string) {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  await withAdmin(url, (client) =>
    client.unsafe(`drop database if exists "${name.replaceAll('"', '""')}" with (force)`),
  );
}

/** `work` on a connection to the server's `postgres` database (where databases are created and dropped). */
async function withAdmin(url: string, work: (client: postgres.Sql) => Promise<unknown>) {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = connect(admin.toString());
  try {
    await work(client);
  } finally {
    await client.end({ timeout: 5 });
  }
}
