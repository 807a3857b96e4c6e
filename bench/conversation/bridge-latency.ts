// What the bridge itself measured of a configuration's turns: its calls' latency per turn (the agent
// tasks' `latency`, docs/voice.md), to set beside what the callers' sockets saw of the same turns.
import type { TurnLatency } from "../../src/models/call-latency";
import type { Tenant } from "../../test/helpers/api";

type Task = { status: string; latency: { turns: TurnLatency[] } | null };

/** Every turn of the assistant's calls, once all of them are concluded (at most `waitMs` later). */
export async function bridgeTurns(tenant: Tenant, assistantId: string, waitMs = 30_000): Promise<TurnLatency[]> {
  const until = performance.now() + waitMs;
  for (;;) {
    const tasks: Task[] = [];
    for (let page = 0; ; page++) {
      const listed = await tenant.org.get(`${tenant.P}/agent-tasks?assistantId=${assistantId}&size=100&page=${page}`);
      tasks.push(...(listed.body.data as Task[]));
      if (page + 1 >= listed.body.totalPages) break;
    }
    const open = tasks.filter((t) => t.status === "offered" || t.status === "active").length;
    if (open === 0 || performance.now() > until) return tasks.flatMap((t) => t.latency?.turns ?? []);
    await Bun.sleep(500);
  }
}

/** One line: the bridge's voice-to-voice and its stages (p50 / p95), and how many turns had each. */
export function bridgeLine(turns: TurnLatency[], stat: (xs: number[], ps?: number[]) => string) {
  const of = (field: "voiceToVoiceMs" | "endpointingMs" | "llmFirstTokenMs" | "ttsFirstAudioMs") =>
    turns.flatMap((t) => (t[field] === null ? [] : [t[field]]));
  const v2v = of("voiceToVoiceMs");
  return [
    `v2v ${stat(v2v)} (${v2v.length} turns)`,
    `endpointing ${stat(of("endpointingMs"))}`,
    `LLM ${stat(of("llmFirstTokenMs"))}`,
    `TTS ${stat(of("ttsFirstAudioMs"))}`,
    `preemptive ${turns.filter((t) => t.preemptive).length}, cut off ${turns.filter((t) => t.interrupted).length}`,
  ].join(";  ");
}
