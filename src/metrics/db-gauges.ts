// Gauges read from Postgres when scraped: facts shared by every bridge or worker, so each process
// reports the same totals (use max(), not sum(), across instances in queries).
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { registerCollectedGauge } from "./metrics";

type Row = Record<string, unknown>;

type Read = (db: Db) => Promise<{ labels: Record<string, string>; value: number }[]>;

/**
 * Registers the gauge once per process. Each caller lends its database until it calls the returned
 * release (on stop); a scrape reads through the newest database still lent, and reports nothing when none is.
 */
function collected(name: string, help: string, labelNames: readonly string[], query: Read) {
  const sources: Db[] = [];
  let registered = false;
  return (db: Db) => {
    sources.push(db);
    if (!registered) {
      registered = true;
      registerCollectedGauge({
        name,
        help,
        labelNames,
        read: async () => (sources.length ? query(sources.at(-1)!) : []),
      });
    }
    return () => void sources.splice(sources.lastIndexOf(db), 1);
  };
}

// both credential gauges are collected at once on a scrape: they share one query in flight
let inFlight: Promise<Row[]> | null = null;
function credentialUsage(db: Db): Promise<Row[]> {
  inFlight ??= Promise.resolve(
    db.execute<Row>(sql`
      select c.id as credential, c.max_agent_tasks as cap, count(t.id)::int as active
      from sip_credentials c left join agent_tasks t on t.credential_id = c.id and t.status in ('offered', 'active')
      group by c.id`),
  )
    .then((rows) => [...rows])
    .finally(() => (inFlight = null));
  return inFlight;
}

// open SIP agent tasks of every credential, across all bridges (the count maxAgentTasks is checked against)
const exposeCredentialUsage = collected(
  "vas_sip_credential_agent_tasks",
  "open (offered or active) agent tasks of each SIP credential across all bridges",
  ["credential"],
  async (db) =>
    (await credentialUsage(db)).map((r) => ({ labels: { credential: String(r.credential) }, value: Number(r.active) })),
);

const exposeCredentialCaps = collected(
  "vas_sip_credential_max_agent_tasks",
  "maxAgentTasks of each SIP credential",
  ["credential"],
  async (db) =>
    (await credentialUsage(db)).map((r) => ({ labels: { credential: String(r.credential) }, value: Number(r.cap) })),
);

/** Both SIP credential gauges (live use and its cap) through `db`; returns their release. */
export function exposeCredentialGauges(db: Db) {
  const releases = [exposeCredentialUsage(db), exposeCredentialCaps(db)];
  return () => {
    for (const release of releases) release();
  };
}

/** Hook deliveries by state (PENDING, SUCCEEDED, FAILED), all organizations. */
export const exposeHookDeliveryStates = collected(
  "vas_hook_deliveries",
  "hook deliveries by state",
  ["state"],
  async (db) => {
    const rows = await db.execute<Row>(
      sql`select status as state, count(*)::int as n from hook_deliveries group by status`,
    );
    return rows.map((r) => ({ labels: { state: String(r.state) }, value: Number(r.n) }));
  },
);
