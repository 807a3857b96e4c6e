// The five routes of a plain resource under P (list, create, read, replace, delete), built from its
// schemas and service functions so that every resource behaves and documents itself the same way.
import { Elysia, t, type TSchema } from "elysia";
import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationScoped } from "./access";
import { EmptyEnvelope, Envelope, PagedEnvelope, PageQuery, errorResponses } from "../models/common";
import { done, ok, paged } from "../models/envelope";
import type { Db } from "../db/client";
import type { OrgScope } from "../services/auth";
import type { Page } from "../models/envelope";

type Ctx = { db: Db; scope: OrgScope; params: Record<string, string>; deps: Deps };
type PageQueryValue = { page?: string; size?: string; sort?: string };

export type CrudService<In, Out> = {
  list(ctx: Ctx, query: PageQueryValue): Promise<Page<Out>>;
  get(ctx: Ctx, id: string): Promise<Out>;
  create(ctx: Ctx, body: In): Promise<Out>;
  update(ctx: Ctx, id: string, body: In): Promise<Out>;
  remove(ctx: Ctx, id: string): Promise<unknown>;
};

export function crudRoutes<C extends TSchema, U extends TSchema, O extends TSchema>(
  deps: Deps,
  spec: {
    path: string; // below P, may hold more params, e.g. "/sip/credentials/:credentialId/phone-numbers"
    tag: string;
    what: string;
    idParam: string; // the item's path parameter, named as in the spec
    sortable: string;
    models: { create: C; update: U; out: O };
    service: CrudService<C["static"] & U["static"], O["static"]>;
  },
) {
  const extraParams = [...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const Params = t.Object(Object.fromEntries(["vendorId", "organizationId", ...extraParams].map((k) => [k, t.String()])));
  const IdParams = t.Object({ ...Params.properties, [spec.idParam]: t.String() });
  const item = `/:${spec.idParam}`;
  const idOf = (params: Record<string, string>) => assertUuid(params[spec.idParam], spec.what);
  const ctx = (scope: OrgScope, params: Record<string, string>): Ctx => ({ db: deps.db, scope, params, deps });
  const tags = [spec.tag];
  // Elysia's inference cannot follow generic schemas; the service signature above carries the types.
  const models: { create: TSchema; update: TSchema; out: TSchema } = spec.models;

  return new Elysia({ prefix: ORG_PREFIX + spec.path })
    .use(organizationScoped(deps))
    .get("", async ({ scope, params, query }) => paged(await spec.service.list(ctx(scope, params), query)), {
      params: Params,
      query: PageQuery,
      response: { 200: PagedEnvelope(models.out), ...errorResponses },
      detail: { tags, summary: `List ${spec.what}s (sortable by ${spec.sortable})` },
    })
    .post("", async ({ scope, params, body, status }) => status(201, ok(await spec.service.create(ctx(scope, params), body as never))), {
      params: Params,
      body: models.create,
      response: { 201: Envelope(models.out), ...errorResponses },
      detail: { tags, summary: `Create a ${spec.what}` },
    })
    .get(item, async ({ scope, params }) => ok(await spec.service.get(ctx(scope, params), idOf(params))), {
      params: IdParams,
      response: { 200: Envelope(models.out), ...errorResponses },
      detail: { tags, summary: `Read a ${spec.what}` },
    })
    .put(
      item,
      async ({ scope, params, body }) => ok(await spec.service.update(ctx(scope, params), idOf(params), body as never)),
      {
        params: IdParams,
        body: models.update,
        response: { 200: Envelope(models.out), ...errorResponses },
        detail: { tags, summary: `Replace a ${spec.what} (a field left out is cleared or reset to its default)` },
      },
    )
    .delete(
      item,
      async ({ scope, params }) => {
        await spec.service.remove(ctx(scope, params), idOf(params));
        return done(`${spec.what} deleted`);
      },
      { params: IdParams, response: { 200: EmptyEnvelope, ...errorResponses }, detail: { tags, summary: `Delete a ${spec.what}` } },
    );
}
