// The one entry point for call events: the call bridge emits inside the transaction that changes the
// call, so an event exists exactly when the change does (an outbox), and wakes the dispatcher once it
// has committed. The dispatcher hands the rows to Temporal.
import { sql, type SQLWrapper } from "drizzle-orm";
import type { Db, DbOrTx, Tx } from "../db/client";
import { executePrepared } from "../db/prepared";
import {
  callEventHooks,
  hookDeliveries,
  hookEventBodies,
  hookMethods,
  testResults,
  type HookParameters,
} from "../db/schema";
import { log } from "../log";
import { serializePayload, type CallConcludedPayload, type CallStartedPayload } from "./payloads";
import { wakeHookDispatchers } from "./wake-dispatchers";

export type EmitCallEventInput = {
  organizationId: string;
  assistantId: string;
  event: CallStartedPayload | CallConcludedPayload;
  /** The event already serialized (serializePayload), e.g. built off the event loop for a big one. */
  body?: string;
  /** set for a test call: its events are captured into its test result, never sent to the customer's hooks */
  testRunId?: string | null;
};

type Emitted = {
  deliveryIds: string[];
  /** a delivery that was not there before: the dispatchers need a wake-up after the commit */
  added: boolean;
};

/** Writes the events of one transaction (emitCallEvent bound to it). */
export type Emit = (input: EmitCallEventInput) => Promise<Emitted>;

/**
 * Runs `change` in one transaction with an emit bound to it; once the transaction has committed, wakes
 * the hook dispatchers if it wrote a new delivery. Not inside it: a NOTIFY serialises the commits of
 * every outbox write (wake-dispatchers.ts).
 */
export async function transactionWithEvents<T>(db: Db, change: (tx: Tx, emit: Emit) => Promise<T>): Promise<T> {
  let added = false;
  const result = await db.transaction((tx) =>
    change(tx, async (input) => {
      const emitted = await emitCallEvent(tx, input);
      added ||= emitted.added;
      return emitted;
    }),
  );
  if (added) wakeHookDispatchers(db);
  return result;
}

/**
 * A change that is one statement (an update returning a row iff it changed something) and its event,
 * in one statement run on its own (Postgres runs it atomically, no transaction): the event is written
 * exactly when the change is. Fewer round trips than transactionWithEvents (the hooks lookup and the
 * statement, or the statement alone for a test call, against begin, change, lookup, insert, commit), so
 * the pooled connection is held for one round trip instead of five.
 */
export async function changeWithEvent(db: Db, change: SQLWrapper, input: EmitCallEventInput): Promise<void> {
  const emitted = await writeEvent(db, input, change);
  if (emitted.added) wakeHookDispatchers(db);
}

/**
 * Writes one delivery per matching hook of the assistant. Idempotent: emitting the same event for the
 * same call again adds nothing and returns the existing delivery ids. Ids come in the hooks' order.
 */
function emitCallEvent(tx: Tx, input: EmitCallEventInput): Promise<Emitted> {
  return writeEvent(tx, input, null);
}

/**
 * The event's writes; with `change`, only if that statement changes something, in the same statement
 * (a CTE: Postgres runs a data-modifying CTE exactly once, and the writes see whether it returned rows).
 */
async function writeEvent(db: DbOrTx, input: EmitCallEventInput, change: SQLWrapper | null): Promise<Emitted> {
  const { event } = input;
  // the statement itself: embedded as it is, drizzle would wrap a query builder in parentheses
  const changeSql = change?.getSQL();
  const changed = changeSql ? sql`changed as (${changeSql}), ` : sql``;
  const ifChanged = changeSql ? sql`exists (select 1 from changed)` : sql`true`;
  if (input.testRunId) {
    // only into a result still running: a decided result is final (a superseded attempt's call, which a
    // stalled worker ends after its result ran out of attempts, must not add to it)
    await db.execute(
      sql`${changeSql ? sql`with changed as (${changeSql}) ` : sql``}update ${testResults}
        set hooks = hooks || jsonb_build_array(${input.body ?? serializePayload(event)}::jsonb)
        where call_id = ${event.callId}::uuid and status = 'running' and ${ifChanged}
          and not hooks @> jsonb_build_array(jsonb_build_object('type', ${event.type}::text))`,
    );
    return { deliveryIds: [], added: false };
  }
  const hooks = await executePrepared<{ id: string; parameters: HookParameters; secret: string | null }>(
    db,
    sql`select ${callEventHooks.id} as id, ${callEventHooks.parameters} as parameters, ${callEventHooks.secretEncrypted} as secret
      from ${callEventHooks}
      where ${callEventHooks.assistantId} = ${input.assistantId} and ${callEventHooks.type} = ${event.type}
      order by ${callEventHooks.position}`,
  );
  const targets = hooks.flatMap((hook) => {
    const { url, method, headers } = hook.parameters;
    if (typeof url !== "string" || url === "") {
      log.warn("hook without url skipped", { hookId: hook.id, callId: event.callId });
      return [];
    }
    return [{ hook, url, method: normalizeMethod(method), headers: headers ?? {} }];
  });
  if (targets.length === 0) {
    // nothing to write but the change itself
    if (changeSql) await executePrepared(db, changeSql);
    return { deliveryIds: [], added: false };
  }

  // one statement for the body and the deliveries (with the change itself, when there is one): the emit
  // sits inside the bridge's own transaction, and each round trip there held its locks longer (6
  // statements became 2)
  const payload = input.body ?? serializePayload(event);
  const rows = sql.join(
    targets.map(
      (t) =>
        sql`(${t.hook.id}::uuid, ${t.url}::text, ${t.method}::text, ${JSON.stringify(t.headers)}::jsonb, ${t.hook.secret}::text)`,
    ),
    sql`, `,
  );
  // A no-op update on conflict returns the row an earlier emit stored, even one committed after this
  // statement began (DO NOTHING would return nothing, and a select in the same statement cannot see
  // it): the body keeps its first payload, a delivery its frozen target. xmax = 0 marks a new row.
  const found = await executePrepared<{ id: string; hook_key: string; inserted: boolean }>(
    db,
    sql`
    with ${changed}body as (
      insert into ${hookEventBodies} (organization_id, call_id, event_type, payload)
      select ${input.organizationId}::uuid, ${event.callId}::uuid, ${event.type}::text, ${payload}::text
      where ${ifChanged}
      on conflict (call_id, event_type) do update set call_id = excluded.call_id
      returning id
    ), delivery as (
      insert into ${hookDeliveries}
        (organization_id, assistant_id, hook_id, hook_key, call_id, event_type, url, method, headers, secret_encrypted, body_id)
      select ${input.organizationId}::uuid, ${input.assistantId}::uuid, t.hook, t.hook, ${event.callId}::uuid,
        ${event.type}::text, t.url, t.method, t.headers, t.secret, body.id
      from (values ${rows}) as t(hook, url, method, headers, secret), body
      on conflict (call_id, hook_key, event_type) do update set call_id = excluded.call_id
      returning id, hook_key, xmax = 0 as inserted
    )
    select id, hook_key, inserted from delivery`,
  );
  // in the hooks' order, so callers can pair deliveries with hooks
  const byHook = new Map(found.map((r) => [r.hook_key, r.id]));
  return { deliveryIds: targets.flatMap((t) => byHook.get(t.hook.id) ?? []), added: found.some((r) => r.inserted) };
}

/** The hook's method in upper case; anything unknown falls back to the default, POST. */
export function normalizeMethod(method: unknown): string {
  const upper = typeof method === "string" ? method.toUpperCase() : "POST";
  return (hookMethods as readonly string[]).includes(upper) ? upper : "POST";
}
