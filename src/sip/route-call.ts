// Which assistant or agent answers a number of a credential: the one whose telephoneNumberId is that
// number, else the one on the credential's fallback number, else nobody (404).
import { and, eq, inArray, or } from "drizzle-orm";
import { answerPathOf, readModelOf, type Db } from "../db/client";
import { readTags } from "../db/read-model";
import { assistants, sipPhoneNumbers } from "../db/schema";
import { loadCallAssistant, type CallAssistant } from "../calls/load-assistant";
import { normalizePhoneNumber } from "../services/phone-format";

export type CallRoute = { assistant: CallAssistant; phoneNumberId: string };

/** The spellings a stored number may have: trunks often drop or add the leading +. */
export function spellings(dialled: string): string[] {
  try {
    const n = normalizePhoneNumber(dialled);
    return n.startsWith("+") ? [n, n.slice(1)] : [n, `+${n}`];
  } catch {
    return [];
  }
}

/**
 * Through the read model (src/db/read-model.ts): a number's route is dropped by any change to the
 * credential's numbers (`numbers:<credential>`) and to the organization's assistants and agents (one
 * of them may take the number).
 */
export async function routeCall(db: Db, credentialId: string, calledNumber: string): Promise<CallRoute | null> {
  const chosen = await readModelOf(db).read(
    `route:${credentialId}:${calledNumber}`,
    (route) => [
      readTags.numbers(credentialId),
      readTags.assistants(route.organizationId),
      readTags.org(route.organizationId),
    ],
    // the caller waits on it: the answer path's connections, not the pool's queue
    () => chooseRoute(answerPathOf(db), credentialId, calledNumber),
  );
  if (!chosen) return null;
  const assistant = await loadCallAssistant(db, chosen.kind, chosen.assistantId);
  return assistant && { assistant, phoneNumberId: chosen.phoneNumberId };
}

async function chooseRoute(db: Db, credentialId: string, calledNumber: string) {
  const numbers = spellings(calledNumber);
  const rows = await db
    .select({
      organizationId: sipPhoneNumbers.organizationId,
      phoneNumberId: sipPhoneNumbers.id,
      fallback: sipPhoneNumbers.fallback,
      phoneNumber: sipPhoneNumbers.phoneNumber,
      assistantId: assistants.id,
      kind: assistants.kind,
    })
    .from(sipPhoneNumbers)
    .innerJoin(assistants, eq(assistants.telephoneNumberId, sipPhoneNumbers.id))
    .where(
      and(
        eq(sipPhoneNumbers.credentialId, credentialId),
        numbers.length
          ? or(inArray(sipPhoneNumbers.phoneNumber, numbers), eq(sipPhoneNumbers.fallback, true))
          : eq(sipPhoneNumbers.fallback, true),
      ),
    );
  return rows.find((r) => numbers.includes(r.phoneNumber)) ?? rows.find((r) => r.fallback) ?? null;
}
