// The calls this process runs, by callId: an API hang-up (NOTIFY) reaches the call wherever it runs.
import type { Sql } from "postgres";
import { listenAlways } from "../db/listen";
import { CALL_HANGUP_CHANNEL } from "../db/schema";
import type { CallHandle } from "./caller-transport";

class RunningCalls {
  private readonly calls = new Map<string, CallHandle>();

  add(call: CallHandle) {
    this.calls.set(call.callId, call);
    void call.done.finally(() => {
      if (this.calls.get(call.callId) === call) this.calls.delete(call.callId);
    });
  }

  get(callId: string): CallHandle | undefined {
    return this.calls.get(callId);
  }
}

export const runningCalls = new RunningCalls();

/**
 * Every bridge process listens: the one running the call ends it as `canceled` (POST
 * agent-tasks/{id}/hangup); `also` gets every callId (the SIP stack cancels a call still ringing).
 */
export function hearHangups(client: Sql, also?: (callId: string) => void) {
  return listenAlways(client, CALL_HANGUP_CHANNEL, (callId) => {
    runningCalls.get(callId)?.end("canceled");
    also?.(callId);
  });
}
