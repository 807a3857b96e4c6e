// What the database wants the bridge to run: every SIP credential with the settings its user agent
// is built from, and the numbers (every spelling) and fallback it answers for calls a trunk sends by
// address. A user agent whose settings changed is replaced; one whose credential is gone retires.
import type { Db } from "../db/client";
import { sipCredentials, sipPhoneNumbers } from "../db/schema";
import type { CredentialSettings } from "./credential-agent";
import { spellings } from "./route-call";

export type WantedCredential = {
  settings: CredentialSettings;
  /**
   * Changes only when the user agent must be rebuilt (trunk, username, password in plain): a PUT
   * seals the password again with a new nonce, which alone must not drop the user agent.
   */
  key: string;
  numbers: Set<string>;
  hasFallback: boolean;
};

/** `unseal` gives the plain password, or null when it cannot be read (that credential is left out). */
export async function loadWantedCredentials(
  db: Db,
  unseal: (credentialId: string, sealed: string) => string | null,
): Promise<Map<string, WantedCredential>> {
  const [rows, numbers] = await Promise.all([
    db.select().from(sipCredentials),
    db
      .select({
        credentialId: sipPhoneNumbers.credentialId,
        phoneNumber: sipPhoneNumbers.phoneNumber,
        fallback: sipPhoneNumbers.fallback,
      })
      .from(sipPhoneNumbers),
  ]);
  const wanted = new Map<string, WantedCredential>();
  for (const row of rows) {
    const password = unseal(row.id, row.passwordEncrypted);
    if (password === null) continue;
    const settings = { id: row.id, hostname: row.hostname, port: row.port, username: row.username, password };
    wanted.set(row.id, {
      settings,
      key: JSON.stringify([row.hostname, row.port, row.username, password]),
      numbers: new Set(),
      hasFallback: false,
    });
  }
  for (const n of numbers) {
    const credential = wanted.get(n.credentialId);
    if (!credential) continue; // added between the two reads: the next sync has it
    for (const spelling of spellings(n.phoneNumber)) credential.numbers.add(spelling);
    credential.hasFallback ||= n.fallback;
  }
  return wanted;
}

/** Running user agents to retire (credential gone or changed) and credentials that need one. */
export function diffAgents(
  running: ReadonlyMap<string, { key: string }>,
  wanted: ReadonlyMap<string, { key: string }>,
) {
  const stale = [...running].filter(([id, agent]) => wanted.get(id)?.key !== agent.key).map(([id]) => id);
  const missing = [...wanted.keys()].filter((id) => !running.has(id) || stale.includes(id));
  return { stale, missing };
}
