import postgres from "postgres";
import { defaultDatabaseTimeoutMs } from "./client";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { fileURLToPath } from "node:url";

// a database that does not answer fails the attempt (and the caller retries) instead of hanging it
const connectTimeout = defaultDatabaseTimeoutMs / 1000;
const migrationsFolder = fileURLToPath(new URL("../../drizzle", import.meta.url));

/** Creates the database when missing, then applies every migration in drizzle/ (idempotent). */
export async function migrateDatabase(url: string) {
  await ensureDatabase(url);
  const client = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: connectTimeout });
  try {
    await migrate(drizzle(client), { migrationsFolder });
  } finally {
    await client.end({ timeout: 5 });
  }
}

async function ensureDatabase(url: string) {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = postgres(admin.toString(), { max: 1, onnotice: () => {}, connect_timeout: connectTimeout });
  try {
    const rows = await client`select 1 from pg_database where datname = ${name}`;
    if (rows.length === 0) await client.unsafe(`create database "${name.replaceAll('"', '""')}"`);
  } finally {
    await client.end({ timeout: 5 });
  }
}

export async function dropDatabase(url: string) {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = postgres(admin.toString(), { max: 1, onnotice: () => {}, connect_timeout: connectTimeout });
  try {
    await client.unsafe(`drop database if exists "${name.replaceAll('"', '""')}" with (force)`);
  } finally {
    await client.end({ timeout: 5 });
  }
}
