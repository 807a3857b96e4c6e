import { and, eq } from "drizzle-orm";
import { llmStrategies } from "../db/schema";
import { readModelOf, type Db, type DbOrTx } from "../db/client";
import { readTags } from "../db/read-model";
import { notFound } from "../errors";
import type { PageRequest } from "../models/common";
import { strategyErrors, type StrategyInput } from "../models/strategies";
import type { OrgScope } from "./auth";
import { parsePaging, selectPage } from "./paging";
import { orConflict, single } from "./rows";
import { throwIfAny } from "./extension-rules";
import { freeFormErrors } from "./free-form-limits";

const columns = {
  id: llmStrategies.id,
  name: llmStrategies.name,
  type: llmStrategies.type,
  organizationId: llmStrategies.organizationId,
  parameters: llmStrategies.parameters,
};
const sortable = {
  id: llmStrategies.id,
  name: llmStrategies.name,
  type: llmStrategies.type,
  createdAt: llmStrategies.createdAt,
};
const byId = (scope: OrgScope, id: string) =>
  and(eq(llmStrategies.organizationId, scope.organizationId), eq(llmStrategies.id, id));
const WHAT = "LLM generation strategy";

export async function getStrategy(db: Db, scope: OrgScope, id: string) {
  const row = await readModelOf(db).read(
    `api:strategy:${scope.organizationId}:${id}`,
    () => [readTags.strategy(id), readTags.org(scope.organizationId)],
    async () => (await db.select(columns).from(llmStrategies).where(byId(scope, id)))[0] ?? null,
  );
  if (!row) throw notFound(WHAT);
  return row;
}

export function listStrategies(db: DbOrTx, scope: OrgScope, query: PageRequest) {
  const paging = parsePaging(query, sortable, "name,asc");
  const where = eq(llmStrategies.organizationId, scope.organizationId);
  return selectPage(db, llmStrategies, where, paging, (limit, offset, orderBy) =>
    db
      .select(columns)
      .from(llmStrategies)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
}

export async function createStrategy(db: DbOrTx, scope: OrgScope, input: StrategyInput) {
  throwIfAny([...freeFormErrors(input.parameters, "parameters"), ...strategyErrors(input)]);
  const [row] = await db
    .insert(llmStrategies)
    .values({ organizationId: scope.organizationId, ...input })
    .returning(columns);
  return row!;
}

// a strategy is read by id and as part of every call view that uses it (src/calls/load-assistant.ts)
export function updateStrategy(db: Db, scope: OrgScope, id: string, input: StrategyInput) {
  throwIfAny([...freeFormErrors(input.parameters, "parameters"), ...strategyErrors(input)]);
  return readModelOf(db).write((tx, touch) => {
    touch(readTags.strategy(id));
    return single(
      tx
        .update(llmStrategies)
        .set({ ...input, updatedAt: new Date() })
        .where(byId(scope, id))
        .returning(columns),
      WHAT,
    );
  });
}

export const deleteStrategy = (db: Db, scope: OrgScope, id: string) =>
  readModelOf(db).write((tx, touch) => {
    touch(readTags.strategy(id));
    return single(
      orConflict(tx.delete(llmStrategies).where(byId(scope, id)).returning({ id: llmStrategies.id }), {
        reference: "the strategy is used by an assistant or agent",
      }),
      WHAT,
    );
  });
