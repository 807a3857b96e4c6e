// Deepgram Flux over websocket (/v2/listen): the caller's audio goes in all the time, silence included
// (the model hears the pauses it decides on), and the provider says when a turn ends: TurnInfo events
// StartOfTurn, Update, EagerEndOfTurn, TurnResumed, EndOfTurn. Updates are the turn's text so far;
// the others go to the endpointing policy (src/voice/turn-taking/endpointing.ts) as they come.
import { log } from "../../log";
import type { SttOptions } from "./deepgram-stt";
import { openSttSocket, SttSocket } from "./stt-socket";

export type FluxOptions = SttOptions & {
  eotThreshold: number;
  eotTimeoutMs: number;
  /** set: EagerEndOfTurn and TurnResumed come too (preemptive generation) */
  eagerEotThreshold: number | null;
};

/** DEEPGRAM_URL with its /v1/listen path as /v2/listen, and Flux's query. */
export function fluxUrl({ url, sampleRate, model, eotThreshold, eotTimeoutMs, eagerEotThreshold }: FluxOptions) {
  const target = new URL(url);
  target.pathname = target.pathname.replace(/\/v1\/listen\/?$/, "/v2/listen");
  const query: Record<string, string> = {
    model,
    encoding: sampleRate === 8000 ? "mulaw" : "linear16",
    sample_rate: String(sampleRate),
    eot_threshold: String(eotThreshold),
    eot_timeout_ms: String(eotTimeoutMs),
    ...(eagerEotThreshold !== null && { eager_eot_threshold: String(eagerEotThreshold) }),
  };
  for (const [key, value] of Object.entries(query)) target.searchParams.set(key, value);
  return target.toString();
}

/** The fields of Flux's server messages this client reads. */
type FluxMessage = { type?: string; event?: string; transcript?: string; code?: string; description?: string };

export class FluxStt extends SttSocket {
  static async connect(options: FluxOptions): Promise<FluxStt> {
    return new FluxStt(await openSttSocket(fluxUrl(options), options.apiKey), options.sampleRate);
  }

  protected ended() {}

  protected onMessage(message: FluxMessage) {
    if (message.type === "Error")
      return log.warn("speech-to-text provider error", { code: message.code, error: message.description });
    if (message.type !== "TurnInfo") return;
    const transcript = (message.transcript ?? "").trim();
    switch (message.event) {
      case "Update":
        if (transcript) this.emit("interim", transcript);
        return;
      case "EagerEndOfTurn":
      case "EndOfTurn":
        return void this.emit("turn", { event: message.event, transcript });
      case "TurnResumed":
        return void this.emit("turn", { event: "TurnResumed" });
    }
  }
}
