// Work that many calls can ask for in the same instant (their ends, when a burst of hang-ups arrives in
// one read of the sockets) runs one job per event-loop turn, so the frame ticker that paces the live
// calls' audio gets its turn between two jobs instead of waiting for all of them.
export type TurnQueue = (job: () => void) => void;

export function createTurnQueue(onError: (error: unknown) => void): TurnQueue {
  const jobs: (() => void)[] = [];
  let scheduled = false;
  const runOne = () => {
    const job = jobs.shift();
    try {
      job?.();
    } catch (error) {
      onError(error);
    }
    if (jobs.length > 0) setImmediate(runOne);
    else scheduled = false;
  };
  return (job) => {
    jobs.push(job);
    if (scheduled) return;
    scheduled = true;
    setImmediate(runOne);
  };
}
