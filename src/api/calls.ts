// POST P/calls: place an outbound call (design.md, "Outbound calls"). The answer is the offered task
// (201); the bridge holding the SIP credential's lease dials it. 429 with Retry-After when the
// credential is at maxAgentTasks, 503 when no bridge holds it.
import type { Deps } from "./deps";
import { ORG_PREFIX, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { AgentTaskModel } from "../models/agent-tasks";
import { CallModel } from "../models/calls";
import { PageQuery } from "../models/common";
import { getAgentTask } from "../services/agent-tasks";
import { placeOutboundCall } from "../services/outbound-calls";

export const callsRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: `${ORG_PREFIX}/calls`,
    access: organizationAccess(deps),
    tag: "Calls",
    what: "call",
    idParam: "callId",
    models: { out: AgentTaskModel.out, query: PageQuery, create: CallModel.create },
    service: {
      create: async ({ scope }, _, body) => {
        const defaults = { maxCallMs: deps.config.bridge.maxCallMs };
        const id = await placeOutboundCall(deps.db, deps.guard, scope, body, defaults);
        return getAgentTask(deps.db, scope, id);
      },
    },
  });
