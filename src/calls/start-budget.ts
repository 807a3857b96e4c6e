// A new call learns within 2 s whether it is served (design: "When Postgres is away"): the database
// work before it is told `ready` (authorization, the assistant, its agent task) shares one budget,
// counted from its request, after which the call is refused as "try again later" unless the database
// answered other statements meanwhile (slow, not away: the call waits for its statements' deadline).
import type { DatabaseAvailability } from "../db/availability";
import { databaseWithin } from "../db/unavailable";

export const callStartBudgetMs = 1_800;

export type StartBudget = { bound<T>(work: Promise<T>, what: string): Promise<T> };

export function startBudget(availability: Pick<DatabaseAvailability, "answeredSince">): StartBudget {
  const from = performance.now();
  return {
    bound: (work, what) =>
      databaseWithin(work, Math.max(1, Math.round(from + callStartBudgetMs - performance.now())), what, () =>
        availability.answeredSince(from),
      ),
  };
}
