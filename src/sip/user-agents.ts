// The user agents of this bridge, one per credential in the database: built when a credential
// appears, replaced when its settings change (the old one unregisters first and keeps its calls and
// their dialogs to their end), retired when it goes; registering only where we hold the lease, and
// hanging up the calls of a credential whose lease another bridge took from us.
import { log } from "../log";
import { CredentialAgent, type AgentOptions } from "./credential-agent";
import { diffAgents, type WantedCredential } from "./credential-sync";
import type { LeaseBeat } from "./takeover";

// how long a sync waits for replaced user agents to unregister before registering their successors
const unregisterWaitMs = 4000;
const trunkRefreshMs = 60_000;

export type UserAgentsOptions = AgentOptions & {
  bridgeId: string;
  /** How old the resolved addresses of a trunk host may get before a sync resolves it again. */
  trunkRefreshMs?: number;
};

export class UserAgents {
  private readonly agents = new Map<string, CredentialAgent>();
  /** Replaced or removed user agents until their last call ends: their dialogs still get requests. */
  private readonly retiring = new Set<CredentialAgent>();
  private stopping = false;

  constructor(private readonly options: UserAgentsOptions) {}

  /** The current user agent of every credential. */
  list(): CredentialAgent[] {
    return [...this.agents.values()];
  }

  get(credentialId: string): CredentialAgent | undefined {
    return this.agents.get(credentialId);
  }

  /** Every user agent that may take a request: the current ones and those retiring with calls. */
  routable(): CredentialAgent[] {
    return [...this.agents.values(), ...this.retiring];
  }

  get activeCalls() {
    return this.routable().reduce((n, a) => n + a.calls.size, 0);
  }

  /** Brings the user agents in line with the database and this beat's leases. */
  async apply(wanted: ReadonlyMap<string, WantedCredential>, leases: LeaseBeat) {
    const { stale, missing } = diffAgents(this.agents, wanted);
    const unregistering = stale.flatMap((id) => {
      const agent = this.agents.get(id);
      if (!agent) return [];
      this.agents.delete(id);
      this.retiring.add(agent);
      const unregistered = agent.setOwned(false);
      void unregistered.finally(() => agent.retire().finally(() => this.retiring.delete(agent)));
      return [unregistered];
    });
    // the old contact goes before the new one registers (both carry the same user); its calls go on
    // in the background (waiting for them here would hold up the lease heartbeat)
    await Promise.race([Promise.allSettled(unregistering), Bun.sleep(unregisterWaitMs)]);
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
      agent.refreshTrunk(this.options.trunkRefreshMs ?? trunkRefreshMs);
      await agent.setOwned(leases.owned.has(id));
    }
    // another bridge took the lease over because we renewed too late (stalled, cut off from the
    // database): it has closed our calls of this credential as lost, so they must not go on here
    // uncounted under maxAgentTasks
    for (const id of leases.lost) {
      if (!wanted.has(id)) continue; // a deleted credential's calls end by themselves
      const agents = this.routable().filter((a) => a.credential.id === id && a.calls.size > 0);
      const endingCalls = agents.reduce((n, a) => n + a.calls.size, 0);
      if (endingCalls === 0) continue;
      log.warn("sip lease lost", { credentialId: id, bridgeId: this.options.bridgeId, endingCalls });
      for (const agent of agents) agent.endCalls("bridge-error");
    }
  }

  /** Ends every call and stops every user agent (shutdown); no sync changes anything after this. */
  async stop() {
    this.halt();
    await Promise.allSettled(this.routable().map((a) => a.retire(true)));
    this.agents.clear();
  }

  /** Marks the start of shutdown, so a sync under way changes nothing more. */
  halt() {
    this.stopping = true;
  }

  private async create(id: string, { settings, key }: WantedCredential) {
    const agent = new CredentialAgent(settings, key, this.options);
    this.agents.set(id, agent);
    await agent.start();
  }
}
