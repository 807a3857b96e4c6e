// The calls this process runs, by callId: an API hang-up (NOTIFY) reaches the call wherever it runs.
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
