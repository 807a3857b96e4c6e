// The user agents of this bridge, one per credential in the database: built when a credential
// appears, replaced when its settings change (the old one unregisters first and keeps its calls to
// their end), retired when it goes; registering only where we hold the lease, and hanging up the
// calls of a credential whose lease another bridge took from us.
import type { SecretBox } from "../crypto/secrets";
import { describeError } from "../errors";
import { log } from "../log";
import { CredentialAgent, type AgentOptions } from "./credential-agent";
import { diffAgents, type WantedCredential } from "./credential-sync";
import type { LeaseBeat } from "./takeover";

// how long a sync waits for replaced user agents to unregister before registering their successors
const retireWaitMs = 4000;

export type UserAgentsOptions = AgentOptions & { bridgeId: string; secrets: SecretBox };

export class UserAgents {
  private readonly agents = new Map<string, CredentialAgent>();
  private stopping = false;

  constructor(private readonly options: UserAgentsOptions) {}

  /** The current user agent of every credential. */
  list(): CredentialAgent[] {
    return [...this.agents.values()];
  }

  get(credentialId: string): CredentialAgent | undefined {
    return this.agents.get(credentialId);
  }

  get activeCalls() {
    return this.list().reduce((n, a) => n + a.calls.size, 0);
  }

  /** Brings the user agents in line with the database and this beat's leases. */
  async apply(wanted: ReadonlyMap<string, WantedCredential>, leases: LeaseBeat) {
    const { stale, missing } = diffAgents(this.agents, wanted);
    const retiring = stale.flatMap((id) => {
      const agent = this.agents.get(id);
      this.agents.delete(id);
      return agent ? [agent.retire()] : [];
    });
    // the old contact goes before the new one registers (both carry the same user); calls may go on
    await Promise.race([Promise.allSettled(retiring), Bun.sleep(retireWaitMs)]);
    for (const id of missing) {
      if (this.stopping) return;
      const credential = wanted.get(id);
      if (credential) await this.create(id, credential);
    }
    for (const [id, agent] of this.agents) {
      if (this.stopping) return;
      const credential = wanted.get(id);
      if (!credential) continue;
      agent.numbers = credential.numbers;
      agent.hasFallback = credential.hasFallback;
      await agent.setOwned(leases.owned.has(id));
    }
    // another bridge took the lease over because we renewed too late (stalled, cut off from the
    // database): it has closed our calls of this credential as lost, so they must not go on here
    // uncounted under maxAgentTasks
    for (const id of leases.lost) {
      const agent = this.agents.get(id);
      if (!agent || agent.calls.size === 0) continue;
      log.warn("sip lease lost", { credentialId: id, bridgeId: this.options.bridgeId, endingCalls: agent.calls.size });
      agent.endCalls("bridge-error");
    }
  }

  /** Ends every call and stops every user agent (shutdown); no sync changes anything after this. */
  async stop() {
    this.halt();
    await Promise.allSettled(this.list().map((a) => a.retire(true)));
    this.agents.clear();
  }

  /** Marks the start of shutdown, so a sync under way changes nothing more. */
  halt() {
    this.stopping = true;
  }

  private async create(id: string, { row, key }: WantedCredential) {
    const password = this.unseal(id, row.passwordEncrypted);
    if (password === null) return;
    const settings = { id, hostname: row.hostname, port: row.port, username: row.username, password };
    const agent = new CredentialAgent(settings, key, this.options);
    this.agents.set(id, agent);
    await agent.start();
  }

  private unseal(credentialId: string, sealed: string): string | null {
    try {
      return this.options.secrets.decrypt(sealed);
    } catch (error) {
      log.error("sip credential unreadable", { credentialId, error: describeError(error) });
      return null;
    }
  }
}
