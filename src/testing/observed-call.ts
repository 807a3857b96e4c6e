// What a test call left for its verdict: who said what, which tools ran and how, how it ended.
import type { EndedReason } from "../db/schema";

export type Side = "agent" | "caller";

export type Utterance = {
  by: Side;
  /** what was meant: the bridge's transcript for the agent, the script or simulator for the caller */
  text: string;
  /** audio only: what the caller's STT heard of the agent */
  heard?: string;
};

export type ObservedToolCall = {
  tool: string;
  arguments: Record<string, unknown>;
  output: string;
  /** answered by a mock, or reached no webhook because no mock matched under toolPolicy mock */
  source: "mock" | "unmocked" | "live";
};

export type ObservedCall = {
  utterances: Utterance[];
  toolCalls: ObservedToolCall[];
  endedReason: EndedReason | null;
  analysis: { data: unknown } | null;
  /** audio only: end of the caller's speech to the agent's first audio, per turn */
  firstAudioMs: number[] | null;
};

/** The transcript as people read it (the judge, JUnit): in audio, heard and intended where they differ. */
export const transcriptLines = (utterances: readonly Utterance[]) =>
  utterances.map((u) =>
    u.heard !== undefined && u.heard !== u.text
      ? `${u.by} (heard): ${u.heard}\n${u.by} (intended): ${u.text}`
      : `${u.by}: ${u.text}`,
  );
