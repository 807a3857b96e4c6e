// Book-keeping of the function calls of each Realtime response: the model continues only once
// every call of a response has its output, and then exactly one response.create is due.

type ResponseCalls = { done: boolean; pending: Set<string>; followUp: boolean };

export class RealtimeToolCalls {
  private readonly responses = new Map<string, ResponseCalls>();
  private readonly responseOfCall = new Map<string, string>();

  private entry(responseId: string): ResponseCalls {
    let entry = this.responses.get(responseId);
    if (!entry) {
      entry = { done: false, pending: new Set(), followUp: false };
      this.responses.set(responseId, entry);
    }
    return entry;
  }

  /** A call the model made in `responseId`; `needsAnswer` is false for calls we answer silently. */
  add(responseId: string, callId: string, needsAnswer = true) {
    const entry = this.entry(responseId);
    entry.pending.add(callId);
    entry.followUp ||= needsAnswer;
    this.responseOfCall.set(callId, responseId);
  }

  isPending(callId: string): boolean {
    return this.responseOfCall.has(callId);
  }

  /** Marks the call answered; true when its response now needs a response.create. */
  resolve(callId: string): boolean {
    const responseId = this.responseOfCall.get(callId);
    if (responseId === undefined) return false;
    this.responseOfCall.delete(callId);
    this.entry(responseId).pending.delete(callId);
    return this.settle(responseId);
  }

  /** The response finished streaming; true when it now needs a response.create. */
  responseDone(responseId: string): boolean {
    if (!this.responses.has(responseId)) return false;
    this.entry(responseId).done = true;
    return this.settle(responseId);
  }

  private settle(responseId: string): boolean {
    const entry = this.entry(responseId);
    if (!entry.done || entry.pending.size > 0) return false;
    this.responses.delete(responseId);
    return entry.followUp;
  }
}
