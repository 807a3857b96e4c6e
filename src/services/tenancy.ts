// Vendors, organizations and API tokens.
import { and, eq, isNull } from "drizzle-orm";
import { apiTokens, organizations, vendors } from "../db/schema";
import { readModelOf, type Db, type DbOrTx } from "../db/client";
import { readTags } from "../db/read-model";
import type { PageRequest } from "../models/common";
import { generateToken } from "../crypto/tokens";
import { badRequest, describeError, notFound } from "../errors";
import { log } from "../log";
import type { RecordingObjects } from "../storage/recording-objects";
import { parsePaging, selectPage, type SortableColumns } from "./paging";

const vendorColumns = {
  id: vendors.id,
  name: vendors.name,
  createdAt: vendors.createdAt,
  updatedAt: vendors.updatedAt,
};
const organizationColumns = {
  id: organizations.id,
  vendorId: organizations.vendorId,
  name: organizations.name,
  createdAt: organizations.createdAt,
  updatedAt: organizations.updatedAt,
};
const tokenColumns = {
  id: apiTokens.id,
  vendorId: apiTokens.vendorId,
  organizationId: apiTokens.organizationId,
  name: apiTokens.name,
  prefix: apiTokens.prefix,
  createdAt: apiTokens.createdAt,
  revokedAt: apiTokens.revokedAt,
};
const sortableVendors: SortableColumns = { id: vendors.id, name: vendors.name, createdAt: vendors.createdAt };
const sortableOrganizations: SortableColumns = {
  id: organizations.id,
  name: organizations.name,
  createdAt: organizations.createdAt,
};
const sortableTokens: SortableColumns = { id: apiTokens.id, name: apiTokens.name, createdAt: apiTokens.createdAt };

export async function createVendor(db: DbOrTx, input: { name: string }) {
  const [row] = await db.insert(vendors).values(input).returning(vendorColumns);
  return row!;
}

export function listVendors(db: DbOrTx, query: PageRequest) {
  const paging = parsePaging(query, sortableVendors, "name,asc");
  return selectPage(db, vendors, undefined, paging, (limit, offset, orderBy) =>
    db
      .select(vendorColumns)
      .from(vendors)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
}

export async function getVendor(db: DbOrTx, vendorId: string) {
  const [row] = await db.select(vendorColumns).from(vendors).where(eq(vendors.id, vendorId));
  if (!row) throw notFound("vendor");
  return row;
}

export async function listOrganizations(db: DbOrTx, vendorId: string, query: PageRequest) {
  const paging = parsePaging(query, sortableOrganizations, "name,asc");
  await getVendor(db, vendorId);
  const where = eq(organizations.vendorId, vendorId);
  return selectPage(db, organizations, where, paging, (limit, offset, orderBy) =>
    db
      .select(organizationColumns)
      .from(organizations)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
}

const orgWhere = (vendorId: string, organizationId: string) =>
  and(eq(organizations.id, organizationId), eq(organizations.vendorId, vendorId));

export async function getOrganization(db: DbOrTx, vendorId: string, organizationId: string) {
  const [row] = await db.select(organizationColumns).from(organizations).where(orgWhere(vendorId, organizationId));
  if (!row) throw notFound("organization");
  return row;
}

export async function createOrganization(db: DbOrTx, vendorId: string, input: { name: string }) {
  await getVendor(db, vendorId);
  const [row] = await db.insert(organizations).values({ vendorId, name: input.name }).returning(organizationColumns);
  return row!;
}

export async function updateOrganization(
  db: DbOrTx,
  vendorId: string,
  organizationId: string,
  input: { name: string },
) {
  const [row] = await db
    .update(organizations)
    .set({ name: input.name, updatedAt: new Date() })
    .where(orgWhere(vendorId, organizationId))
    .returning(organizationColumns);
  if (!row) throw notFound("organization");
  return row;
}

/**
 * Deleting an organization deletes everything in it (its tokens included): it is the tenant boundary.
 * Its recordings in the bucket go after the answer (a listing and a request per object); what a failure
 * leaves there is logged, and the bucket's lifecycle rule (docs/operations.md) ends it.
 */
export async function deleteOrganization(
  db: Db,
  vendorId: string,
  organizationId: string,
  objects: RecordingObjects | null = null,
) {
  await readModelOf(db).write(async (tx, touch) => {
    const rows = await tx
      .delete(organizations)
      .where(orgWhere(vendorId, organizationId))
      .returning({ id: organizations.id });
    if (rows.length === 0) throw notFound("organization");
    // its assistants and strategies went with it (cascade)
    touch(readTags.org(organizationId));
  });
  void objects
    ?.removeOrganization(organizationId)
    .then((removed) => removed > 0 && log.info("organization recordings deleted", { organizationId, removed }))
    .catch((error) => log.warn("organization recordings not deleted", { organizationId, error: describeError(error) }));
}

export async function createApiToken(
  db: DbOrTx,
  vendorId: string,
  input: { name?: string | null; organizationId?: string | null },
) {
  await getVendor(db, vendorId);
  if (input.organizationId) {
    const [org] = await db
      .select({ id: organizations.id })
      .from(organizations)
      .where(orgWhere(vendorId, input.organizationId));
    if (!org) throw badRequest("organizationId", "no such organization in this vendor");
  }
  const token = generateToken();
  const [row] = await db
    .insert(apiTokens)
    .values({
      vendorId,
      organizationId: input.organizationId ?? null,
      name: input.name ?? null,
      tokenHash: token.hash,
      prefix: token.prefix,
    })
    .returning(tokenColumns);
  return { ...row!, token: token.plain };
}

export async function listApiTokens(db: DbOrTx, vendorId: string, query: PageRequest) {
  const paging = parsePaging(query, sortableTokens, "createdAt,asc");
  await getVendor(db, vendorId);
  const where = eq(apiTokens.vendorId, vendorId);
  return selectPage(db, apiTokens, where, paging, (limit, offset, orderBy) =>
    db
      .select(tokenColumns)
      .from(apiTokens)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
}

/** Marks the token revoked; no process (API instance or bridge) accepts it once this returns. */
export async function revokeApiToken(db: Db, vendorId: string, tokenId: string) {
  await readModelOf(db).write(async (tx, touch) => {
    const rows = await tx
      .update(apiTokens)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.vendorId, vendorId), isNull(apiTokens.revokedAt)))
      .returning({ id: apiTokens.id });
    if (rows.length === 0) throw notFound("api token");
    touch(readTags.token(tokenId));
  });
}
