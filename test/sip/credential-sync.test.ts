// What the bridge reads to build its user agents, from the real database, and the diff against the
// user agents it runs.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { diffAgents, loadWantedCredentials } from "../../src/sip/credential-sync";
import { startCredentialFixtures } from "./helpers/credentials";

let fixtures: Awaited<ReturnType<typeof startCredentialFixtures>>;

beforeAll(async () => {
  fixtures = await startCredentialFixtures("credential-sync");
});
afterAll(async () => {
  await fixtures?.stop();
});

const unseal = (_id: string, sealed: string) => fixtures.secrets.decrypt(sealed);

test("every credential with its numbers in every spelling and its fallback; the key changes with the settings only", async () => {
  const withNumbers = await fixtures.createCredential({ hostname: "127.0.0.1", port: 5070, username: "desk" });
  const bare = await fixtures.createCredential({ username: "bare" });
  await fixtures.createNumber(withNumbers, "+15550300001");
  await fixtures.createNumber(withNumbers, "15550300002", true);

  const wanted = await loadWantedCredentials(fixtures.db, unseal);
  const desk = wanted.get(withNumbers);
  expect(desk?.settings).toEqual({
    id: withNumbers,
    hostname: "127.0.0.1",
    port: 5070,
    username: "desk",
    password: "secret",
  });
  expect([...(desk?.numbers ?? [])].sort()).toEqual(["+15550300001", "+15550300002", "15550300001", "15550300002"]);
  expect(desk?.hasFallback).toBe(true);
  expect(wanted.get(bare)).toMatchObject({ hasFallback: false, numbers: new Set() });

  // a PUT of the same settings seals the password anew: the user agent must stay
  await fixtures.updateCredential(withNumbers, { username: "desk" });
  expect((await loadWantedCredentials(fixtures.db, unseal)).get(withNumbers)?.key).toBe(desk?.key as string);
  await fixtures.updateCredential(withNumbers, { username: "desk", password: "changed" });
  const changed = await loadWantedCredentials(fixtures.db, unseal);
  expect(changed.get(withNumbers)?.key).not.toBe(desk?.key);
  expect(changed.get(withNumbers)?.settings.password).toBe("changed");
  expect(changed.get(bare)?.key).toBe(wanted.get(bare)?.key as string);
  // a password that cannot be unsealed leaves the credential out
  const unreadable = await loadWantedCredentials(fixtures.db, (id, sealed) =>
    id === bare ? null : unseal(id, sealed),
  );
  expect(unreadable.has(bare)).toBe(false);
  expect(unreadable.has(withNumbers)).toBe(true);
});

test("the diff: changed and deleted credentials' agents are stale; new and changed ones are missing", () => {
  const running = new Map([
    ["same", { key: "k1" }],
    ["changed", { key: "k2" }],
    ["deleted", { key: "k3" }],
  ]);
  const wanted = new Map([
    ["same", { key: "k1" }],
    ["changed", { key: "k2b" }],
    ["new", { key: "k4" }],
  ]);
  const { stale, missing } = diffAgents(running, wanted);
  expect(stale.sort()).toEqual(["changed", "deleted"]);
  expect(missing.sort()).toEqual(["changed", "new"]);
  expect(diffAgents(wanted, wanted)).toEqual({ stale: [], missing: [] });
});
