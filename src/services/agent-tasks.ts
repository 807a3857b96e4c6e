// Agent tasks are written by the call bridge; the API only reads them.
import { and, eq, sql, type SQL } from "drizzle-orm";
import { agentTasks, assistants } from "../db/schema";
import type { DbOrTx } from "../db/client";
import type { AgentTaskQuery } from "../models/agent-tasks";
import type { OrgScope } from "./auth";
import { parsePaging, selectPage } from "./paging";
import { single } from "./rows";

const ownerOf = (kind: "assistant" | "agent") =>
  sql<string | null>`case when ${assistants.kind} = ${kind} then ${agentTasks.assistantId} end`;

const columns = {
  id: agentTasks.id,
  callId: agentTasks.callId,
  assistantId: ownerOf("assistant"),
  agentId: ownerOf("agent"),
  credentialId: agentTasks.credentialId,
  phoneNumberId: agentTasks.phoneNumberId,
  transport: agentTasks.transport,
  status: agentTasks.status,
  error: agentTasks.error,
  startedAt: agentTasks.startedAt,
  endedAt: agentTasks.endedAt,
  createdAt: agentTasks.createdAt,
};
const sortable = { id: agentTasks.id, createdAt: agentTasks.createdAt, startedAt: agentTasks.startedAt, endedAt: agentTasks.endedAt, status: agentTasks.status };

const select = (db: DbOrTx) => db.select(columns).from(agentTasks).leftJoin(assistants, eq(assistants.id, agentTasks.assistantId));

export const getAgentTask = (db: DbOrTx, scope: OrgScope, id: string) =>
  single(select(db).where(and(eq(agentTasks.organizationId, scope.organizationId), eq(agentTasks.id, id))), "agent task");

export function listAgentTasks(db: DbOrTx, scope: OrgScope, query: AgentTaskQuery) {
  const paging = parsePaging(query, sortable, "createdAt,asc");
  const filters: SQL[] = [eq(agentTasks.organizationId, scope.organizationId)];
  if (query.status) filters.push(eq(agentTasks.status, query.status));
  for (const id of [query.assistantId, query.agentId]) if (id) filters.push(eq(agentTasks.assistantId, id));
  const where = and(...filters);
  return selectPage(db, agentTasks, where, paging, (limit, offset, orderBy) =>
    select(db).where(where).orderBy(...orderBy).limit(limit).offset(offset),
  );
}
