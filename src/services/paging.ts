import { asc, count, desc, type SQL } from "drizzle-orm";
import type { AnyPgColumn, PgTable } from "drizzle-orm/pg-core";
import { badRequest } from "../errors";
import type { DbOrTx } from "../db/client";
import type { PageRequest } from "../models/common";

// key names the sort order, for callers that prepare one statement per order
export type Paging = { page: number; size: number; sort: SQL[]; key: string };
import type { Page } from "../models/envelope";
export type SortableColumns = Record<string, AnyPgColumn>;

export const MAX_PAGE_SIZE = 100;

/** Parses page/size/sort query values against a whitelist of sortable columns. */
export function parsePaging(query: PageRequest, sortable: SortableColumns, defaultSort: string): Paging {
  const page = query.page === undefined ? 0 : Number(query.page);
  if (!Number.isSafeInteger(page) || page < 0) throw badRequest("page", "must be an integer >= 0");
  const size = query.size === undefined ? 20 : Number(query.size);
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_PAGE_SIZE)
    throw badRequest("size", `must be an integer between 1 and ${MAX_PAGE_SIZE}`);
  const [field = "", direction = "asc", ...rest] = (query.sort ?? defaultSort).split(",").map((s) => s.trim());
  const column = sortable[field];
  if (!column || rest.length > 0 || !["asc", "desc"].includes(direction.toLowerCase()))
    throw badRequest("sort", `must be field[,asc|desc] with field one of: ${Object.keys(sortable).join(", ")}`);
  const order = direction.toLowerCase() === "desc" ? desc(column) : asc(column);
  // a unique tie-breaker keeps pages stable when sort values repeat
  const tieBreaker = sortable.id ?? Object.values(sortable)[0]!;
  const key = `${field},${direction.toLowerCase()}`;
  return { page, size, key, sort: column === tieBreaker ? [order] : [order, asc(tieBreaker)] };
}

/** Runs the count and the page query together: one round trip on a pipelined connection. */
export async function selectPage<T>(
  db: DbOrTx,
  table: PgTable,
  where: SQL | undefined,
  paging: Paging,
  rows: (limit: number, offset: number, orderBy: SQL[]) => Promise<T[]>,
): Promise<Page<T>> {
  const [totals, data] = await Promise.all([
    db.select({ n: count() }).from(table).where(where),
    rows(paging.size, paging.page * paging.size, paging.sort),
  ]);
  return pageOf(data, paging, totals[0]?.n ?? 0);
}

/** One page of a list with its totals. */
export function pageOf<T>(data: T[], paging: Paging, totalElements: number): Page<T> {
  return {
    data,
    page: paging.page,
    size: paging.size,
    totalElements,
    totalPages: Math.ceil(totalElements / paging.size),
  };
}
