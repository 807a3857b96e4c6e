// Assistants and agents: one service, told apart by `kind`.
import { and, eq, inArray, ne, sql } from "drizzle-orm";
import {
  assistantCounts,
  assistants,
  callEventHooks,
  campaigns,
  extensions,
  knowledgeBases,
  llmStrategies,
  sipPhoneNumbers,
  type AssistantKind,
} from "../db/schema";
import { readModelOf, type Db, type DbOrTx } from "../db/client";
import { readTags } from "../db/read-model";
import type { PageRequest } from "../models/common";
import type { SecretBox } from "../crypto/secrets";
import type { AssistantInput, ExtensionInput, HookInput } from "../models/assistants";
import { badRequest, conflict, notFound } from "../errors";
import type { OrgScope } from "./auth";
import { pageOf, parsePaging, type Paging, type SortableColumns } from "./paging";
import { planList } from "./nested-lists";
import { throwIfAny, turnTakingStrategyErrors, validateExtensions, validateHooks } from "./extension-rules";
import type { OutboundGuard } from "../net/outbound-guard";
import { handoffDestinationErrors, handoffsNaming } from "./handoff-destinations";

const sortable: SortableColumns = {
  id: assistants.id,
  name: assistants.name,
  createdAt: assistants.createdAt,
  updatedAt: assistants.updatedAt,
};

type Extension = { id: string; type: string; name: string | null; parameters: Record<string, unknown> };
type Hook = { id: string; type: string; parameters: Record<string, unknown> };

// drizzle writes a column of a single-table select unqualified, which inside a subquery would bind
// to the subquery's own id column
const outerId = sql.raw(`"assistants"."id"`);
// drizzle hands json of raw SQL fields over as text
const parseJson = <T>(value: unknown): T => (typeof value === "string" ? JSON.parse(value) : value) as T;

// The children are select-list subqueries, not joins: Postgres then builds them only for the rows of
// the page, after sorting and limiting (a lateral join would build them for every row first).
const columns = {
  id: assistants.id,
  name: assistants.name,
  systemPrompt: assistants.systemPrompt,
  systemPromptGreeting: assistants.systemPromptGreeting,
  llmAudioContentGenerationStrategyId: assistants.llmAudioContentGenerationStrategyId,
  telephoneNumberId: assistants.telephoneNumberId,
  extensions: sql<
    Extension[]
  >`coalesce((select json_agg(json_build_object('id', e.id, 'type', e.type, 'name', e.name, 'parameters', e.parameters) order by e.position)
    from ${extensions} e where e.assistant_id = ${outerId}), '[]'::json)`.mapWith(parseJson<Extension[]>),
  callEventHooks: sql<
    Hook[]
  >`coalesce((select json_agg(json_build_object('id', h.id, 'type', h.type, 'parameters', h.parameters) order by h.position)
    from ${callEventHooks} h where h.assistant_id = ${outerId}), '[]'::json)`.mapWith(parseJson<Hook[]>),
};

const scoped = (scope: OrgScope, kind: AssistantKind) =>
  and(eq(assistants.organizationId, scope.organizationId), eq(assistants.kind, kind));

// The read paths are the hot ones: their statements are built once per connection pool and reused
// (building them costs more than running them).
const byScope = and(
  eq(assistants.organizationId, sql.placeholder("org")),
  eq(assistants.kind, sql.placeholder("kind")),
);
const prepared = new WeakMap<Db, ReturnType<typeof prepare>>();
function prepare(db: Db) {
  const lists = new Map<string, ReturnType<typeof prepareList>>();
  // the page and its total in one statement (the total read from assistant_counts, kept by triggers)
  const prepareList = (paging: Paging) =>
    db
      .select({
        ...columns,
        total: sql<number>`(select c.n from ${assistantCounts} c where c.organization_id = ${sql.placeholder("org")}
          and c.kind = ${sql.placeholder("kind")})`.mapWith(Number),
      })
      .from(assistants)
      .where(byScope)
      .orderBy(...paging.sort)
      .limit(sql.placeholder("limit"))
      .offset(sql.placeholder("offset"))
      .prepare(`assistants_list_${paging.key.replace(",", "_")}`);
  return {
    get: db
      .select(columns)
      .from(assistants)
      .where(and(byScope, eq(assistants.id, sql.placeholder("id"))))
      .prepare("assistants_get"),
    count: db
      .select({ n: assistantCounts.n })
      .from(assistantCounts)
      .where(
        and(
          eq(assistantCounts.organizationId, sql.placeholder("org")),
          eq(assistantCounts.kind, sql.placeholder("kind")),
        ),
      )
      .prepare("assistants_count"),
    list: (paging: Paging) => lists.get(paging.key) ?? lists.set(paging.key, prepareList(paging)).get(paging.key)!,
  };
}
const statements = (db: Db) => prepared.get(db) ?? prepared.set(db, prepare(db)).get(db)!;

/** What a write touches in the read model (src/db/read-model.ts): the one assistant and its organization's lists. */
const touched = (organizationId: string, id: string) => [readTags.assistant(id), readTags.assistants(organizationId)];

export async function getAssistant(db: Db, scope: OrgScope, kind: AssistantKind, id: string) {
  const org = scope.organizationId;
  const row = await readModelOf(db).read(
    `api:${kind}:${org}:${id}`,
    () => [readTags.assistant(id), readTags.org(org)],
    async () => (await statements(db).get.execute({ org, kind, id }))[0] ?? null,
  );
  if (!row) throw notFound(kind);
  return row;
}

export async function listAssistants(db: Db, scope: OrgScope, kind: AssistantKind, query: PageRequest) {
  const paging = parsePaging(query, sortable, "name,asc");
  const s = statements(db);
  const org = scope.organizationId;
  // a page is kept like an item: any write to an assistant of the organization drops its pages
  return (await readModelOf(db).read(
    `api:${kind}s:${org}:${paging.key}:${paging.page}:${paging.size}`,
    () => [readTags.assistants(org), readTags.org(org)],
    async () => {
      const rows = await s.list(paging).execute({ org, kind, limit: paging.size, offset: paging.page * paging.size });
      // a page past the end has no row to carry the total
      const total = rows[0]?.total ?? (await s.count.execute({ org, kind }))[0]?.n ?? 0;
      return pageOf(
        rows.map(({ total: _, ...row }) => row),
        paging,
        total,
      );
    },
  ))!;
}

/** `guard`: refuses hook and tool destinations it would not reach (400 naming the field). */
export async function createAssistant(
  db: Db,
  secrets: SecretBox,
  scope: OrgScope,
  kind: AssistantKind,
  input: AssistantInput,
  guard: OutboundGuard,
) {
  validate(input, guard);
  const id = await readModelOf(db).write(async (tx, touch) => {
    await checkReferences(tx, scope, null, input);
    const [row] = await tx
      .insert(assistants)
      .values({ organizationId: scope.organizationId, kind, ...scalarFields(input) })
      .returning({ id: assistants.id });
    await writeChildren(tx, secrets, row!.id, input, new Map(), new Map());
    touch(...touched(scope.organizationId, row!.id));
    return row!.id;
  });
  return getAssistant(db, scope, kind, id);
}

export async function updateAssistant(
  db: Db,
  secrets: SecretBox,
  scope: OrgScope,
  kind: AssistantKind,
  id: string,
  input: AssistantInput,
  guard: OutboundGuard,
) {
  if (input.id !== undefined && input.id !== id) throw badRequest("id", "does not match the id in the path");
  validate(input, guard);
  await readModelOf(db).write(async (tx, touch) => {
    const [row] = await tx
      .select({ id: assistants.id })
      .from(assistants)
      .where(and(scoped(scope, kind), eq(assistants.id, id)))
      .for("update");
    if (!row) throw notFound(kind);
    touch(...touched(scope.organizationId, id));
    await checkReferences(tx, scope, id, input);
    await tx
      .update(assistants)
      .set({ ...scalarFields(input), updatedAt: new Date() })
      .where(eq(assistants.id, id));
    const storedExtensions = await tx
      .select({ id: extensions.id, secretEncrypted: extensions.secretEncrypted })
      .from(extensions)
      .where(eq(extensions.assistantId, id));
    const storedHooks = await tx
      .select({ id: callEventHooks.id, secretEncrypted: callEventHooks.secretEncrypted })
      .from(callEventHooks)
      .where(eq(callEventHooks.assistantId, id));
    await writeChildren(
      tx,
      secrets,
      id,
      input,
      new Map(storedExtensions.map((e) => [e.id, e.secretEncrypted])),
      new Map(storedHooks.map((h) => [h.id, h.secretEncrypted])),
    );
  });
}

/**
 * 409 while a handoff extension names it (the lock orders this against a write adding such a handoff).
 * Its campaigns, which the delete takes with it, are locked before the assistant: a campaign step
 * locks its campaign and then its call's insert key-shares the assistant, and locking the other way
 * round deadlocked with a step dialling (Postgres then failed the delete or the dial).
 */
export async function deleteAssistant(db: Db, scope: OrgScope, kind: AssistantKind, id: string) {
  await readModelOf(db).write(async (tx, touch) => {
    await tx
      .select({ id: campaigns.id })
      .from(campaigns)
      .where(and(eq(campaigns.assistantId, id), eq(campaigns.organizationId, scope.organizationId)))
      .for("update");
    const [row] = await tx
      .select({ id: assistants.id })
      .from(assistants)
      .where(and(scoped(scope, kind), eq(assistants.id, id)))
      .for("update");
    if (!row) throw notFound(kind);
    const users = await handoffsNaming(tx, scope.organizationId, id);
    if (users.length > 0)
      throw conflict(
        `the assistant is a destination of the handoff extension of ${users.map((u) => `${u.kind} "${u.name}" (${u.id})`).join(", ")}: take it out of those first`,
      );
    await tx.delete(assistants).where(eq(assistants.id, id));
    touch(...touched(scope.organizationId, id));
  });
}

function validate(input: AssistantInput, guard: OutboundGuard) {
  throwIfAny([
    ...validateExtensions(input.extensions ?? [], guard),
    ...validateHooks(input.callEventHooks ?? [], guard),
  ]);
}

// PUT takes the full object: a scalar left out is cleared.
function scalarFields(input: AssistantInput) {
  return {
    name: input.name,
    systemPrompt: input.systemPrompt ?? null,
    systemPromptGreeting: input.systemPromptGreeting ?? null,
    llmAudioContentGenerationStrategyId: input.llmAudioContentGenerationStrategyId ?? null,
    telephoneNumberId: input.telephoneNumberId ?? null,
  };
}

async function checkReferences(tx: DbOrTx, scope: OrgScope, selfId: string | null, input: AssistantInput) {
  const org = scope.organizationId;
  throwIfAny(await handoffDestinationErrors(tx, org, selfId, input.extensions ?? []));
  for (const [i, ext] of (input.extensions ?? []).entries()) {
    const kbId = ext.type === "knowledge_base" ? ext.parameters.knowledgeBaseId : undefined;
    if (typeof kbId !== "string") continue;
    const [found] = await tx
      .select({ id: knowledgeBases.id })
      .from(knowledgeBases)
      .where(and(eq(knowledgeBases.id, kbId), eq(knowledgeBases.organizationId, org)));
    if (!found)
      throw badRequest(`extensions[${i}].parameters.knowledgeBaseId`, "no such knowledge base in this organization");
  }
  if (input.llmAudioContentGenerationStrategyId) {
    const [found] = await tx
      .select({ type: llmStrategies.type, parameters: llmStrategies.parameters })
      .from(llmStrategies)
      .where(
        and(eq(llmStrategies.id, input.llmAudioContentGenerationStrategyId), eq(llmStrategies.organizationId, org)),
      );
    if (!found)
      throw badRequest("llmAudioContentGenerationStrategyId", "no such LLM generation strategy in this organization");
    throwIfAny(turnTakingStrategyErrors(input.extensions ?? [], found));
  }
  if (input.telephoneNumberId) {
    const [found] = await tx
      .select({ id: sipPhoneNumbers.id })
      .from(sipPhoneNumbers)
      .where(and(eq(sipPhoneNumbers.id, input.telephoneNumberId), eq(sipPhoneNumbers.organizationId, org)));
    if (!found) throw badRequest("telephoneNumberId", "no such phone number in this organization");
    const others = tx
      .select({ id: assistants.id })
      .from(assistants)
      .where(
        selfId
          ? and(eq(assistants.telephoneNumberId, input.telephoneNumberId), ne(assistants.id, selfId))
          : eq(assistants.telephoneNumberId, input.telephoneNumberId),
      );
    if ((await others).length > 0) throw conflict("the phone number already serves another assistant or agent");
  }
}

async function writeChildren(
  tx: DbOrTx,
  secrets: SecretBox,
  assistantId: string,
  input: AssistantInput,
  storedExtensions: Map<string, string | null>,
  storedHooks: Map<string, string | null>,
) {
  const ext = planList("extensions", input.extensions ?? [], new Set(storedExtensions.keys()));
  const hooks = planList("callEventHooks", input.callEventHooks ?? [], new Set(storedHooks.keys()));

  if (ext.remove.length) await tx.delete(extensions).where(inArray(extensions.id, ext.remove));
  if (hooks.remove.length) await tx.delete(callEventHooks).where(inArray(callEventHooks.id, hooks.remove));
  for (const { id, item, position } of ext.update)
    await tx
      .update(extensions)
      .set(extensionRow(secrets, item, position, storedExtensions.get(id) ?? null))
      .where(eq(extensions.id, id));
  for (const { id, item, position } of hooks.update)
    await tx
      .update(callEventHooks)
      .set(hookRow(secrets, item, position, storedHooks.get(id) ?? null))
      .where(eq(callEventHooks.id, id));
  if (ext.create.length)
    await tx
      .insert(extensions)
      .values(
        ext.create.map(({ item, position }) => ({ assistantId, ...extensionRow(secrets, item, position, null) })),
      );
  if (hooks.create.length)
    await tx
      .insert(callEventHooks)
      .values(hooks.create.map(({ item, position }) => ({ assistantId, ...hookRow(secrets, item, position, null) })));
}

function extensionRow(secrets: SecretBox, item: ExtensionInput, position: number, storedSecret: string | null) {
  // a tool's name is its parameters.name unless given explicitly
  const name = item.name ?? (item.type === "tool_webhook" ? (item.parameters.name as string) : null);
  if (item.type !== "knowledge_base")
    return {
      position,
      type: item.type,
      name,
      parameters: item.parameters,
      secretEncrypted: null,
      knowledgeBaseId: null,
    };
  // a knowledge_base's authToken is write-only like a hook secret; its knowledge base a real reference (409 on delete)
  const { authToken, ...parameters } = item.parameters;
  const secretEncrypted =
    parameters.url === undefined || authToken === null
      ? null
      : authToken === undefined
        ? storedSecret
        : secrets.encrypt(String(authToken));
  const knowledgeBaseId = typeof parameters.knowledgeBaseId === "string" ? parameters.knowledgeBaseId : null;
  return { position, type: item.type, name, parameters, secretEncrypted, knowledgeBaseId };
}

// The secret is write-only: kept encrypted beside the parameters, never inside them. Omitted keeps it,
// null removes it, a string replaces it.
function hookRow(secrets: SecretBox, item: HookInput, position: number, storedSecret: string | null) {
  const { secret, ...parameters } = item.parameters;
  const secretEncrypted =
    secret === undefined ? storedSecret : secret === null ? null : secrets.encrypt(String(secret));
  return { position, type: item.type, parameters, secretEncrypted };
}
