// The one way to write a controller: a resource's routes (list, create, read, replace, delete; each only when
// the service offers it) built from its t models and service functions, so that every resource validates,
// answers and documents itself the same way. Extra routes (a retry, a recovery) are chained onto the result.
import { Elysia, t, type Static, type TSchema } from "elysia";
import { assertUuid, type Access } from "./access";
import type { TObject } from "@sinclair/typebox";
import { EmptyEnvelope, Envelope, PagedEnvelope, errorResponses, sortableBy } from "../models/common";
import { done, ok, paged, type Page } from "../models/envelope";

type Params = Record<string, string>;

type Service<A, Q, C, U, O, D> = {
  list?: (access: A, params: Params, query: Q) => Promise<Page<O>>;
  get?: (access: A, params: Params, id: string) => Promise<D>;
  create?: (access: A, params: Params, body: C) => Promise<O>;
  /** returns the stored object, or null where the spec answers a replace with data: null */
  update?: (access: A, params: Params, id: string, body: U) => Promise<O | null>;
  remove?: (access: A, params: Params, id: string) => Promise<unknown>;
};

export type ResourceSpec<
  A,
  QS extends TSchema,
  CS extends TSchema,
  US extends TSchema,
  OS extends TSchema,
  DS extends TSchema,
> = {
  /** full path, e.g. ORG_PREFIX + "/llm-generation-strategies"; may hold more params */
  prefix: string;
  access: Access<A>;
  tag: string;
  what: string;
  /** the item's path parameter, named as in the spec */
  idParam: string;
  /** the fields a list sorts by (its service's parsePaging whitelist): its summary, and its `sort`'s pattern */
  sortable?: readonly string[];
  /** longer OpenAPI descriptions of single operations */
  notes?: { list?: string; update?: string };
  /**
   * query: the list's query string (PageQuery plus filters); detail: what a read answers (default: out);
   * created: what a create answers when it shows more than a read (a token's secret, once)
   */
  models: { out: OS; query: QS; create?: CS; update?: US; detail?: DS; created?: TSchema; updateAnswersNull?: boolean };
  service: Service<A, Static<QS>, Static<CS>, Static<US>, Static<OS>, Static<DS>>;
};

export function resourceRoutes<
  A,
  QS extends TSchema,
  CS extends TSchema,
  US extends TSchema,
  OS extends TSchema,
  DS extends TSchema = OS,
>(spec: ResourceSpec<A, QS, CS, US, OS, DS>) {
  const names = [...spec.prefix.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const pathParams = Object.fromEntries(names.map((k) => [k, t.String()]));
  // Elysia refuses an empty params object, so a path without parameters declares none
  const ListParams = names.length > 0 ? t.Object(pathParams) : undefined;
  const ItemParams = t.Object({ ...pathParams, [spec.idParam]: t.String() });
  const item = `/:${spec.idParam}`;
  const idOf = (params: Params) => assertUuid(params[spec.idParam], spec.what);
  const { models, service } = spec;
  const detail = (summary: string, description?: string) => ({ tags: [spec.tag], summary, description });
  // Responses are documented and checked at run time; typed as plain schemas because Elysia's return-type
  // inference cannot follow generic ones (the service signatures carry the types).
  const out: TSchema = models.out;
  const read: TSchema = models.detail ?? models.out;
  const created: TSchema = models.created ?? models.out;
  const updated: TSchema = models.updateAnswersNull ? EmptyEnvelope : Envelope(out);

  // local: the access check belongs to this resource's routes only
  let app = new Elysia({ prefix: spec.prefix }).derive(async ({ request, params }) => ({
    access: await spec.access(request.headers.get("authorization"), params as Params),
  }));
  const { list, get, create, update, remove } = service;
  if (list)
    app = app.get("", async ({ access, params, query }) => paged(await list(access, params, query)), {
      params: ListParams,
      query: sortableBy(models.query as TSchema as TObject, spec.sortable ?? []) as TSchema as QS,
      response: { 200: PagedEnvelope(out), ...errorResponses },
      detail: detail(`List ${spec.what}s (sortable by ${spec.sortable?.join(", ")})`, spec.notes?.list),
    });
  if (create && models.create)
    app = app.post(
      "",
      async ({ access, params, body, status }) => status(201, ok(await create(access, params, body))),
      {
        params: ListParams,
        body: models.create,
        response: { 201: Envelope(created), ...errorResponses },
        detail: detail(`Create a ${spec.what}`),
      },
    );
  if (get)
    app = app.get(item, async ({ access, params }) => ok(await get(access, params, idOf(params))), {
      params: ItemParams,
      response: { 200: Envelope(read), ...errorResponses },
      detail: detail(`Read a ${spec.what}`),
    });
  if (update && models.update)
    app = app.put(item, async ({ access, params, body }) => ok(await update(access, params, idOf(params), body)), {
      params: ItemParams,
      body: models.update,
      response: { 200: updated, ...errorResponses },
      detail: detail(
        `Replace a ${spec.what}`,
        spec.notes?.update ?? "Takes the full object: a field left out is cleared or reset to its default.",
      ),
    });
  if (remove)
    app = app.delete(
      item,
      async ({ access, params }) => {
        await remove(access, params, idOf(params));
        return done(`${spec.what} deleted`);
      },
      {
        params: ItemParams,
        response: { 200: EmptyEnvelope, ...errorResponses },
        detail: detail(`Delete a ${spec.what}`),
      },
    );
  return app;
}
