import { and, eq } from "drizzle-orm";
import { llmStrategies } from "../db/schema";
import type { DbOrTx } from "../db/client";
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

export const getStrategy = (db: DbOrTx, scope: OrgScope, id: string) =>
  single(db.select(columns).from(llmStrategies).where(byId(scope, id)), WHAT);

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

export function updateStrategy(db: DbOrTx, scope: OrgScope, id: string, input: StrategyInput) {
  throwIfAny([...freeFormErrors(input.parameters, "parameters"), ...strategyErrors(input)]);
  return single(
    db
      .update(llmStrategies)
      .set({ ...input, updatedAt: new Date() })
      .where(byId(scope, id))
      .returning(columns),
    WHAT,
  );
}

export const deleteStrategy = (db: DbOrTx, scope: OrgScope, id: string) =>
  single(
    orConflict(db.delete(llmStrategies).where(byId(scope, id)).returning({ id: llmStrategies.id }), {
      reference: "the strategy is used by an assistant or agent",
    }),
    WHAT,
  );
