// SIP credentials and the phone numbers under them.
import { and, eq, inArray, sql } from "drizzle-orm";
import { agentTasks, SIP_CREDENTIALS_CHANNEL, sipCredentials, sipPhoneNumbers, sipRegistrations } from "../db/schema";
import { readModelOf, type Db, type DbOrTx, type Tx } from "../db/client";
import { readTags } from "../db/read-model";
import type { PageRequest } from "../models/common";
import type { SecretBox } from "../crypto/secrets";
import { badRequest } from "../errors";
import type { OutboundGuard } from "../net/outbound-guard";
import type { PhoneNumberInput, SipCredentialInput } from "../models/sip";
import type { OrgScope } from "./auth";
import { parsePaging, selectPage } from "./paging";
import { orConflict, single } from "./rows";
import { normalizePhoneNumber } from "./phone-format";

const credentialColumns = {
  id: sipCredentials.id,
  hostname: sipCredentials.hostname,
  port: sipCredentials.port,
  username: sipCredentials.username,
  maxAgentTasks: sipCredentials.maxAgentTasks,
};
// the registration state is written by the bridges; reads join it in, writes never touch it
const registrationColumns = {
  state: sipRegistrations.state,
  lastStatus: sipRegistrations.lastStatus,
  lastError: sipRegistrations.lastError,
  updatedAt: sipRegistrations.updatedAt,
};
const withRegistration = <T extends { registration: { updatedAt: Date } | null }>(row: T) => ({
  ...row,
  registration: row.registration && { ...row.registration, updatedAt: row.registration.updatedAt.toISOString() },
});
// live use, counted the way reserve_agent_task counts it against maxAgentTasks (agent_tasks_active_credential_idx)
const activeAgentTasks = sql<number>`(select count(*)::int from ${agentTasks} where ${agentTasks.credentialId} = ${sipCredentials.id} and ${inArray(agentTasks.status, ["offered", "active"])})`;
const selectCredentials = (db: DbOrTx) =>
  db
    .select({ ...credentialColumns, activeAgentTasks, registration: registrationColumns })
    .from(sipCredentials)
    .leftJoin(sipRegistrations, eq(sipRegistrations.credentialId, sipCredentials.id));
/** The bridges pick up changes of credentials and their numbers at once (and resync periodically in case a notification is lost). */
const notifyBridges = (db: DbOrTx, id: string) => db.execute(sql`select pg_notify(${SIP_CREDENTIALS_CHANNEL}, ${id})`);

const credentialSortable = {
  id: sipCredentials.id,
  hostname: sipCredentials.hostname,
  username: sipCredentials.username,
  createdAt: sipCredentials.createdAt,
};
const credentialById = (scope: OrgScope, id: string) =>
  and(eq(sipCredentials.organizationId, scope.organizationId), eq(sipCredentials.id, id));
const CREDENTIAL = "SIP credentials";

export const getCredential = async (db: DbOrTx, scope: OrgScope, id: string) =>
  withRegistration(await single(selectCredentials(db).where(credentialById(scope, id)), CREDENTIAL));

export function listCredentials(db: DbOrTx, scope: OrgScope, query: PageRequest) {
  const paging = parsePaging(query, credentialSortable, "hostname,asc");
  const where = eq(sipCredentials.organizationId, scope.organizationId);
  return selectPage(db, sipCredentials, where, paging, async (limit, offset, orderBy) =>
    (
      await selectCredentials(db)
        .where(where)
        .orderBy(...orderBy)
        .limit(limit)
        .offset(offset)
    ).map(withRegistration),
  );
}

// PUT replaces everything: maxAgentTasks left out goes back to its default.
const credentialRow = (secrets: SecretBox, input: SipCredentialInput) => ({
  hostname: input.hostname,
  port: input.port,
  username: input.username,
  passwordEncrypted: secrets.encrypt(input.password),
  maxAgentTasks: input.maxAgentTasks ?? 10,
});

/** The registrar host must be one the outbound guard lets us reach (400 naming `hostname`). */
function checkHostname(guard: OutboundGuard, hostname: string) {
  const refusal = guard.configuredHostRefusal(hostname);
  if (refusal) throw badRequest("hostname", `not an allowed destination: ${refusal}`);
}

export async function createCredential(
  db: DbOrTx,
  secrets: SecretBox,
  scope: OrgScope,
  input: SipCredentialInput,
  guard: OutboundGuard,
) {
  checkHostname(guard, input.hostname);
  const [row] = await db
    .insert(sipCredentials)
    .values({ organizationId: scope.organizationId, ...credentialRow(secrets, input) })
    .returning(credentialColumns);
  await notifyBridges(db, row!.id);
  return { ...row!, activeAgentTasks: 0, registration: null };
}

export async function updateCredential(
  db: DbOrTx,
  secrets: SecretBox,
  scope: OrgScope,
  id: string,
  input: SipCredentialInput,
  guard: OutboundGuard,
) {
  checkHostname(guard, input.hostname);
  await single(
    db
      .update(sipCredentials)
      .set({ ...credentialRow(secrets, input), updatedAt: new Date() })
      .where(credentialById(scope, id))
      .returning(credentialColumns),
    CREDENTIAL,
  );
  await notifyBridges(db, id);
  return getCredential(db, scope, id);
}

export async function deleteCredential(db: DbOrTx, scope: OrgScope, id: string) {
  const deleted = await single(
    orConflict(db.delete(sipCredentials).where(credentialById(scope, id)).returning({ id: sipCredentials.id }), {
      reference: "the credentials still have phone numbers: delete those first",
    }),
    CREDENTIAL,
  );
  await notifyBridges(db, id);
  return deleted;
}

const numberColumns = {
  id: sipPhoneNumbers.id,
  phoneNumber: sipPhoneNumbers.phoneNumber,
  fallback: sipPhoneNumbers.fallback,
};
const numberSortable = {
  id: sipPhoneNumbers.id,
  phoneNumber: sipPhoneNumbers.phoneNumber,
  createdAt: sipPhoneNumbers.createdAt,
};
const numbersOf = (scope: OrgScope, credentialId: string) =>
  and(eq(sipPhoneNumbers.organizationId, scope.organizationId), eq(sipPhoneNumbers.credentialId, credentialId));
const numberById = (scope: OrgScope, credentialId: string, id: string) =>
  and(numbersOf(scope, credentialId), eq(sipPhoneNumbers.id, id));
const NUMBER = "phone number";
const numberConflicts = {
  unique: {
    sip_phone_numbers_vendor_number_uq: "the phone number already exists in this vendor",
    sip_phone_numbers_one_fallback_uq: "the credentials already have a fallback number",
  },
};

export const getPhoneNumber = (db: DbOrTx, scope: OrgScope, credentialId: string, id: string) =>
  single(
    db
      .select(numberColumns)
      .from(sipPhoneNumbers)
      .where(numberById(scope, credentialId, id)),
    NUMBER,
  );

export async function listPhoneNumbers(db: DbOrTx, scope: OrgScope, credentialId: string, query: PageRequest) {
  const paging = parsePaging(query, numberSortable, "phoneNumber,asc");
  await getCredential(db, scope, credentialId);
  const where = numbersOf(scope, credentialId);
  return selectPage(db, sipPhoneNumbers, where, paging, (limit, offset, orderBy) =>
    db
      .select(numberColumns)
      .from(sipPhoneNumbers)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
}

/** A change to a credential's numbers: their calls' routes (src/sip/route-call.ts) are dropped everywhere before it answers. */
const writeNumbers = <T>(db: Db, credentialId: string, work: (tx: Tx) => Promise<T>) =>
  readModelOf(db).write((tx, touch) => {
    touch(readTags.numbers(credentialId));
    return work(tx);
  });

export const createPhoneNumber = (db: Db, scope: OrgScope, credentialId: string, input: PhoneNumberInput) =>
  writeNumbers(db, credentialId, (tx) => insertPhoneNumber(tx, scope, credentialId, input));

async function insertPhoneNumber(db: DbOrTx, scope: OrgScope, credentialId: string, input: PhoneNumberInput) {
  const phoneNumber = normalizePhoneNumber(input.phoneNumber);
  await getCredential(db, scope, credentialId);
  const [row] = await orConflict(
    db
      .insert(sipPhoneNumbers)
      .values({
        organizationId: scope.organizationId,
        vendorId: scope.vendorId,
        credentialId,
        phoneNumber,
        fallback: input.fallback ?? false,
      })
      .returning(numberColumns),
    numberConflicts,
  );
  await notifyBridges(db, credentialId);
  return row!;
}

export const updatePhoneNumber = (db: Db, scope: OrgScope, credentialId: string, id: string, input: PhoneNumberInput) =>
  writeNumbers(db, credentialId, (tx) => replacePhoneNumber(tx, scope, credentialId, id, input));

async function replacePhoneNumber(
  db: DbOrTx,
  scope: OrgScope,
  credentialId: string,
  id: string,
  input: PhoneNumberInput,
) {
  const phoneNumber = normalizePhoneNumber(input.phoneNumber);
  const row = await single(
    orConflict(
      db
        .update(sipPhoneNumbers)
        .set({ phoneNumber, fallback: input.fallback ?? false, updatedAt: new Date() })
        .where(numberById(scope, credentialId, id))
        .returning(numberColumns),
      numberConflicts,
    ),
    NUMBER,
  );
  await notifyBridges(db, credentialId);
  return row;
}

export const deletePhoneNumber = (db: Db, scope: OrgScope, credentialId: string, id: string) =>
  writeNumbers(db, credentialId, (tx) => removePhoneNumber(tx, scope, credentialId, id));

async function removePhoneNumber(db: DbOrTx, scope: OrgScope, credentialId: string, id: string) {
  const row = await single(
    orConflict(
      db
        .delete(sipPhoneNumbers)
        .where(numberById(scope, credentialId, id))
        .returning({ id: sipPhoneNumbers.id }),
      {
        reference: "the phone number is assigned to an assistant or agent",
      },
    ),
    NUMBER,
  );
  await notifyBridges(db, credentialId);
  return row;
}
